"""What to do with the session's changes at the end: commit them to a new branch
(`agent_core.git.commit_patch_to_branch`), or save a patch, written byte for byte."""

from __future__ import annotations

from pathlib import Path

from agent_core.git import write_patch


class FinishError(Exception):
    """The chosen ending could not be done; the message says what to do instead."""


def save_patch(patch: str, path: Path | str) -> Path:
    """Write the patch to `path` byte for byte (parents created); returns the absolute path."""
    return write_patch(patch, path)
