"""Files too big to checkpoint: `truncate -s 1T tracked.txt` makes a file git would hash for
hours. Before every `git add` of navtui's, the paths it adds are `lstat`ed (a directory added
whole is walked, no link followed); a regular file over `MAX_FILE_BYTES` is left out of the add
and never read: the checkpoint records it as such, a small placeholder file saying its size
(so undo to an earlier checkpoint does put the earlier content back), and it is named.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from agent_core.git.process.runner import GitRunner

# One file over this is not hashed into a checkpoint (hashing 2 GiB takes seconds).
MAX_FILE_BYTES = 2 << 30


def over_cap(root: Path, paths: Iterable[str] | None, limit: int = MAX_FILE_BYTES) -> dict[str, int]:
    """path -> size of each regular file over `limit` among `paths` (relative to `root`; a
    directory is walked; None: the whole working tree)."""
    found: dict[str, int] = {}
    for rel in ["."] if paths is None else paths:
        rel = rel.rstrip("/") or "."
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                found[rel] = st.st_size
        elif stat.S_ISDIR(st.st_mode) and os.path.basename(rel) != ".git":
            found.update(_walk(root, rel, limit))
    return found


def _walk(root: Path, rel: str, limit: int) -> dict[str, int]:
    found = {}
    top = root / rel
    for directory, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != ".git"]  # (os.walk follows no link)
        for name in filenames:
            path = os.path.join(directory, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                found[os.path.relpath(path, root)] = st.st_size
    return found


class BigFiles:
    """The files of the working tree recorded as over the cap. git would hash them to compare
    them with their placeholders, so `git status` is told to leave them out (`pathspecs`) and
    navtui `lstat`s them itself (`changed`)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._sizes: dict[str, int] = {}

    def found(self, paths: Iterable[str] | None) -> dict[str, int]:
        """`over_cap` of `paths`, kept as recorded."""
        found = over_cap(self._root, paths)
        self._sizes.update(found)
        return found

    def pathspecs(self) -> tuple[str, ...]:
        """`git status` arguments leaving the recorded files out (none when there are none)."""
        if not self._sizes:
            return ()
        return ("--", ".", *(f":(exclude,literal){path}" for path in sorted(self._sizes)))

    def changed(self) -> list[str]:
        """The recorded files whose size changed since (or that are gone, or not regular files
        any more): no longer recorded, for `add` to look at again."""
        gone = []
        for path, size in list(self._sizes.items()):
            try:
                st = os.lstat(self._root / path)
                same = stat.S_ISREG(st.st_mode) and st.st_size == size
            except OSError:
                same = False
            if not same:
                gone.append(path)
                del self._sizes[path]
        return gone


def record_placeholders(git: GitRunner, index: Path, found: dict[str, int]) -> None:
    """Enter each file of `found` (path -> size) in the private `index` as its placeholder."""
    if not found:
        return
    listing = b""
    for path, size in sorted(found.items()):
        text = f"navtui: {path} was {size} bytes, over the checkpoint cap: not kept\n"
        blob = git.run("hash-object", "-w", "--stdin", stdin=text.encode("utf-8", "surrogateescape"))
        listing += b"100644 " + blob.strip() + b"\t" + os.fsencode(path) + b"\0"
    git.run("update-index", "-z", "--add", "--replace", "--index-info", index=index, stdin=listing)


def notice(path: str, size: int) -> str:
    """The line that names a file left out of a checkpoint for its size."""
    return (f"{path}: {_size(size)}, over the checkpoint cap of {_size(MAX_FILE_BYTES)}: not "
            "read or hashed; the checkpoint holds a placeholder naming its size, and undo "
            "cannot bring this version back")


def _size(size: int) -> str:
    for unit, scale in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"
