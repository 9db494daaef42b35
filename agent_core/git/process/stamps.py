"""A file's stat stamp: enough to tell that a file was rewritten since it was last read."""

from __future__ import annotations

from pathlib import Path

FileStamp = tuple[int, int, int]


def file_stamp(path: Path) -> FileStamp | None:
    """(inode, size, mtime in ns) of `path`; None when it cannot be stat'ed (e.g. missing)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns
