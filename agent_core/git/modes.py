"""File permissions git does not record (read-only, private, ...): kept at a session's start and
given back to the files undo rewrites (git itself only keeps the executable bit)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

_GIT_MODES = (0o644, 0o755, 0o664, 0o775)  # what a checkout makes under the usual umasks


def save_modes(root: Path, listing: bytes, saved: Path) -> None:
    """Write to `saved` the unusual permissions of the files in `listing` (`ls-files -s -z`)."""
    modes = {}
    for field in listing.split(b"\0"):
        path = os.fsdecode(field.split(b"\t", 1)[-1]) if b"\t" in field else ""
        try:
            st = os.lstat(root / path) if path else None
        except OSError:
            continue
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 not in _GIT_MODES:
            modes[path] = st.st_mode & 0o7777
    saved.write_text(json.dumps(modes), encoding="utf-8")


def restore_modes(root: Path, paths: list[str], saved: Path) -> None:
    """Give the restored `paths` the permissions `save_modes` kept in `saved`."""
    try:
        modes = json.loads(saved.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for path in paths:
        mode = modes.get(path)
        target = root / path
        if mode is not None and target.is_file() and not target.is_symlink():
            os.chmod(target, mode)
