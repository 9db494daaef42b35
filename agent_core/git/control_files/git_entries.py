"""Every `.git` file, directory or link in a working tree: where the sandbox must cover a git
directory, and which ones the model made during a session.

A walk never follows a symlink, never enters a `.git` (nor the top one), and keeps each
directory's listing with its stamp, so a walk again costs one `lstat` per directory and a read
of those that changed. A `.git` is known by its path and what it is (`GitEntry`): a directory
by its inode, a file or link also by size and times, so one replaced or rewritten is not taken
for the one that was there.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

DOT_GIT = ".git"
# A tree with more directories than this is walked up to here.
MAX_DIRECTORIES = 200_000


@dataclass(frozen=True)
class GitEntry:
    """What a `.git` is: `kind` dir, file, link or other; its inode, device, size and mtime
    (size and mtime 0 for a directory: git writing in it changes them)."""

    kind: str
    inode: int
    device: int
    size: int = 0
    mtime_ns: int = 0


def entry_of(st: os.stat_result) -> GitEntry:
    if stat.S_ISDIR(st.st_mode):
        return GitEntry("dir", st.st_ino, st.st_dev)
    kind = "file" if stat.S_ISREG(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "other"
    return GitEntry(kind, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)


def look(path: Path) -> GitEntry | None:
    """What is at `path` now (None: nothing)."""
    try:
        return entry_of(os.lstat(path))
    except OSError:
        return None


@dataclass
class _Listing:
    stamp: tuple[int, int, int]
    subdirectories: list[str] = field(default_factory=list)
    has_git: bool = False


class GitEntryScan:
    """Finds the `.git` entries under `root` (relative paths, `n/.git`; the repository's own
    `.git` as `.git`). `skip`: relative directories not to walk (ignored ones too big to
    matter between shell starts)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._listings: dict[str, _Listing] = {}

    def scan(self, skip: Iterable[str] = ()) -> dict[str, GitEntry]:
        """Relative path -> GitEntry of every `.git` under the root now."""
        skipped = {path.rstrip("/") for path in skip}
        found: dict[str, GitEntry] = {}
        seen: set[str] = set()
        pending = [""]
        while pending and len(seen) < MAX_DIRECTORIES:
            relative = pending.pop()
            seen.add(relative)
            listing = self._listing(relative)
            if listing is None:
                continue
            if listing.has_git:
                name = f"{relative}/{DOT_GIT}" if relative else DOT_GIT
                entry = look(self.root / name)
                if entry is not None:
                    found[name] = entry
            for child in listing.subdirectories:
                path = f"{relative}/{child}" if relative else child
                if path not in skipped:
                    pending.append(path)
        for gone in set(self._listings) - seen:
            del self._listings[gone]
        return found

    def _listing(self, relative: str) -> _Listing | None:
        directory = self.root / relative if relative else self.root
        try:
            st = os.lstat(directory)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        known = self._listings.get(relative)
        if known is not None and known.stamp == stamp:
            return known
        listing = _Listing(stamp)
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name == DOT_GIT:
                        listing.has_git = True
                    elif entry.is_dir(follow_symlinks=False):
                        listing.subdirectories.append(entry.name)
        except OSError:
            return None
        self._listings[relative] = listing
        return listing


def work_tree_of(entry_path: str) -> str:
    """The directory a `.git` entry belongs to (`n/.git` -> `n`; the top `.git` -> ``)."""
    return entry_path.rpartition("/")[0]
