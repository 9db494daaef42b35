"""Writing navtui's own refs (`refs/navtui/...`, never the user's) without a git process."""

from __future__ import annotations

import os
from pathlib import Path

from agent_core.git.process.runner import GitRunner


def write_ref(git: GitRunner, common_dir: Path, ref: str, commit: str) -> None:
    """Point `ref` at `commit`: a loose ref file written as git writes it (lock file, then
    rename); through `update-ref` where refs are not files (reftable) or the lock is taken."""
    path = common_dir / ref
    if not (common_dir / "reftable").exists():
        lock = path.with_name(path.name + ".lock")
        try:
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileNotFoundError:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            pass
        else:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(commit + "\n")
            os.replace(lock, path)
            return
    git.run("update-ref", ref, commit)
