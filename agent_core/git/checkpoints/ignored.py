"""Which ignored files a checkpoint keeps: everything under a size cap; the rest is named.

`.env`, a small `.venv/`, build outputs: files the user may have no other copy of, that
`git clean -fdx` or `rm -rf` would take away. A huge ignored directory (a real virtualenv,
`node_modules/`) is summarised instead of copied into the object store every step, and once a
directory is over the cap it stays out for the session (it is not walked again).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class IgnoredCaps:
    """Limits for ignored files in checkpoints (per file, and per ignored directory)."""

    file_bytes: int = 2_000_000
    dir_files: int = 5_000
    dir_bytes: int = 50_000_000


Signature = tuple[tuple[str, int, int, int, int], ...]


@dataclass
class IgnoredScan:
    """The ignored files to snapshot (with a stat signature) and what was left out, and why."""

    files: list[str] = field(default_factory=list)
    signature: Signature = ()
    left_out: dict[str, str] = field(default_factory=dict)  # path -> "why" summary
    git_entries: set[str] = field(default_factory=set)  # `.git`s met on the way (not kept)


def _size(n: int) -> str:
    amount = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if amount < 1000 or unit == "GB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1000
    return str(amount)


def _walk(root: Path, top: str, git_entries: set[str]) -> list[tuple[str, os.stat_result]]:
    """Files and symlinks under `top` (never following links); a `.git` anywhere is skipped,
    and its path added to `git_entries`."""
    found = []
    stack = [top.rstrip("/")]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(root / rel))
        except OSError:
            continue
        for entry in entries:
            name = f"{rel}/{entry.name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name == ".git":
                git_entries.add(name)
            elif stat.S_ISDIR(st.st_mode):
                stack.append(name)
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                found.append((name, st))
    return found


def scan(root: Path, entries: list[str], caps: IgnoredCaps, over_cap: set[str]) -> IgnoredScan:
    """Pick the ignored `entries` (from `git ls-files -o -i --directory`) to snapshot.

    `over_cap` holds directories already found too big; new ones are added to it.
    """
    result = IgnoredScan()
    signature = []
    for entry in entries:
        if entry in over_cap:
            continue
        if entry.endswith("/"):
            listed = _walk(root, entry, result.git_entries)
            total = sum(st.st_size for _, st in listed)
            if len(listed) > caps.dir_files or total > caps.dir_bytes:
                over_cap.add(entry)
                result.left_out[entry] = f"{entry} ({len(listed)} files, {_size(total)})"
                continue
        else:
            try:
                listed = [(entry, os.lstat(root / entry))]
            except OSError:
                continue
        for name, st in listed:
            if st.st_size > caps.file_bytes:
                result.left_out[name] = f"{name} ({_size(st.st_size)})"
                continue
            result.files.append(name)
            signature.append((name, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ino))
    result.signature = tuple(signature)
    return result
