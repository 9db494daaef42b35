"""The stat stamp of a private index, with its shared part when navtui keeps it split.

A split index (`core.splitIndex`) holds the entries changed lately; the rest are in a
`sharedindex.<id>` file that git writes into the git directory it runs in (navtui's raw view).
Telling that the index is as navtui last wrote it then takes the shared files' stamps too: their
inode and size, not their time, which git sets to now each time it reads one (so that it does
not expire).
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_core.git.checkpoints.private_dir import SHARED_INDEX
from agent_core.git.process.stamps import FileStamp, file_stamp

IndexStamp = tuple[FileStamp, tuple[tuple[str, int, int], ...]]


def index_stamp(index: Path, shared_dir: Path | None) -> IndexStamp | None:
    """(the index's stamp, the stamps of the shared index files in `shared_dir`, by name);
    None when the index cannot be stat'ed. `shared_dir` None: a whole index (no shared part)."""
    own = file_stamp(index)
    if own is None:
        return None
    if shared_dir is None:
        return own, ()
    shared = []
    try:
        entries = list(os.scandir(shared_dir))
    except OSError:
        entries = []
    for entry in entries:
        if SHARED_INDEX.fullmatch(entry.name):
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            shared.append((entry.name, st.st_ino, st.st_size))
    return own, tuple(sorted(shared))


def index_bytes(stamp: IndexStamp) -> int:
    """About how big the index is whole: its own file, or its largest shared part."""
    own, shared = stamp
    return max([own[1], *(size for _, _, size in shared)])
