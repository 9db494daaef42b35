"""`git add -A` into a private index: of the paths `git status` named, or of the whole tree,
tried again while files vanish under it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from agent_core.git.errors import WorkspaceError
from agent_core.git.runner import GitRunner

_VANISHED = ("unable to stat", "No such file or directory", "Not a directory")
_VANISHED_RETRIES = 20
# Beyond this many changed paths one whole-tree `git add -A` is cheaper than a pathspec list.
_MAX_PATHSPECS = 200


def add_changed(
    git: GitRunner, index: Path, paths: list[str] | None,
) -> subprocess.CompletedProcess[bytes]:
    """`git add -A` of `paths` (literal pathspecs) into the private index; the whole tree
    (`add_all`) when there are many, when status could not tell, or when one vanished."""
    if paths is None or len(paths) > _MAX_PATHSPECS:
        return add_all(git, index)
    result = git.run_full(
        "add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
        index=index, stdin=b"".join(os.fsencode(p.rstrip("/")) + b"\0" for p in paths),
        ok_codes=(0, 1, 128), env={"GIT_LITERAL_PATHSPECS": "1"},
    )
    return add_all(git, index) if result.returncode == 128 else result


def add_all(git: GitRunner, index: Path) -> subprocess.CompletedProcess[bytes]:
    """`git add -A` into the private index, retried while files vanish under it.

    A watcher or build tool that creates and deletes files makes git die with "unable to
    stat" when a file it just listed is gone; the next try sees the directory afresh.
    """
    for attempt in range(_VANISHED_RETRIES):
        result = git.run_full("add", "-A", "--ignore-errors", index=index, ok_codes=(0, 1, 128))
        if result.returncode != 128:
            return result
        error = result.stderr.decode("utf-8", "replace").strip()
        if not any(sign in error for sign in _VANISHED):
            break
        time.sleep(0.005 * attempt)
    raise WorkspaceError(
        f"could not snapshot {git.root}: {error}. If a tool keeps creating and deleting "
        "files there, pause it (or ignore its files in .gitignore) and try again."
    )
