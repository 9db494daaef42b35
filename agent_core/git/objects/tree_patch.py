"""A snapshot tree made in Python from the last one and the files a step changed in place,
without a git process: an edit step's `git add` and `write-tree` cost ~7 ms each in a session.

Only what needs no rule of git's is done here: files the last tree holds, written again or
deleted. A new entry (its ignore rules), anything but a regular file (symlinks, directories,
submodules) or a file over `MAX_LOOSE_BYTES` makes `patch` answer None, and the caller asks
git. The raw view turns every attribute conversion off (`rawview.NO_CONVERSION`), so a blob is
the file's bytes as they are. Objects are written loose into the repository's object store, as
`git add` and `write-tree` write them.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zlib
from collections.abc import Callable, Iterable
from typing import Literal
from pathlib import Path

from agent_core.git.objects.object_files import write_read_only
from agent_core.git.objects.packs import MAX_LOOSE_BYTES, read_loose
from agent_core.git.process.safe_files import read_regular

__all__ = ["TreePatcher", "parse_tree", "serialize_tree"]

_TREE, _REGULAR, _EXECUTABLE = b"40000", b"100644", b"100755"
# Trees kept parsed (the oldest go first; read again from the store when needed).
KEPT_TREES = 4096
# An entry: (mode, name, raw object id)
Entry = tuple[bytes, bytes, bytes]
# A changed file: its new (mode, raw id), or None where it was deleted
Change = tuple[bytes, bytes] | None


def parse_tree(content: bytes, id_size: int) -> list[Entry]:
    """The entries of a tree object's `content` (ids `id_size` bytes long)."""
    entries, at = [], 0
    while at < len(content):
        space = content.index(b" ", at)
        nul = content.index(b"\0", space)
        entries.append((content[at:space], content[space + 1:nul], content[nul + 1:nul + 1 + id_size]))
        at = nul + 1 + id_size
    return entries


def _order(entry: Entry) -> bytes:
    """git's order of tree entries: by name, a tree's name as if it ended in `/`."""
    return entry[1] + b"/" if entry[0] == _TREE else entry[1]


def serialize_tree(entries: Iterable[Entry]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + raw for mode, name, raw in sorted(entries, key=_order))


class TreePatcher:
    """Trees and blobs of `root`'s repository, in `objects` (`object_format` sha1 or sha256).
    `cat_tree(id)` reads a tree git has packed (the repository's own history). `filemode`:
    git's core.filemode (False: a file keeps the mode the tree gave it)."""

    def __init__(self, root: Path, objects: Path, object_format: str,
                 cat_tree: Callable[[str], bytes], filemode: bool = True) -> None:
        self._root = root
        self._objects = objects
        self._format = object_format
        self._cat_tree = cat_tree
        self._filemode = filemode
        self._id_size = hashlib.new(object_format).digest_size
        self._trees: dict[bytes, list[Entry]] = {}  # raw id -> entries, of trees read or written
        self._empty = hashlib.new(object_format, b"tree 0\0").digest()

    def patch(self, tree: str, paths: Iterable[str], known_gone: Callable[[str], bool]) -> str | None:
        """The tree of the work tree now, when it differs from `tree` only in `paths`; None
        when git has to decide (see the module docstring). A path that is not in `tree` and
        does not exist is skipped where `known_gone(path)` (a temporary file), else None."""
        changes: dict[tuple[bytes, ...], Change] = {}
        for path in paths:
            parts = tuple(os.fsencode(path).split(b"/"))
            old = self._lookup(bytes.fromhex(tree), parts)
            if old is False:
                return None
            try:
                found = os.lstat(self._root / path)
            except FileNotFoundError:
                found = None
            except OSError:
                return None
            if found is None:
                if old is None and known_gone(path):
                    continue
                if old is None or old[0] not in (_REGULAR, _EXECUTABLE):
                    return None
                changes[parts] = None
                continue
            if old is None or old[0] not in (_REGULAR, _EXECUTABLE) or not stat.S_ISREG(found.st_mode):
                return None
            if found.st_size > MAX_LOOSE_BYTES:
                return None
            blob = self._blob(self._root / path)
            if blob is None:
                return None
            mode = (_EXECUTABLE if found.st_mode & stat.S_IXUSR else _REGULAR) if self._filemode else old[0]
            if (mode, blob) != old:
                changes[parts] = (mode, blob)
        if not changes:
            return tree
        try:
            return self._rebuilt(bytes.fromhex(tree), changes, 0).hex()
        except LookupError:  # a tree read on the way is gone from the store (or malformed)
            return None

    def _lookup(self, tree: bytes, parts: tuple[bytes, ...]) -> tuple[bytes, bytes] | None | Literal[False]:
        """(mode, raw id) of `parts` in `tree`; None when it is not there; False when a
        directory on the way is not a tree or cannot be read."""
        for depth, name in enumerate(parts):
            entries = self._entries(tree)
            if entries is None:
                return False
            entry = next((e for e in entries if e[1] == name), None)
            if entry is None:
                return None
            if depth == len(parts) - 1:
                return entry[0], entry[2]
            if entry[0] != _TREE:
                return False
            tree = entry[2]
        return False

    def _entries(self, tree: bytes) -> list[Entry] | None:
        if tree not in self._trees:
            loose = read_loose(self._objects, tree.hex())
            if loose is not None and loose[0] != b"tree":
                return None
            try:
                content = loose[1] if loose is not None else self._cat_tree(tree.hex())
                self._keep(tree, parse_tree(content, self._id_size))
            except (OSError, ValueError):
                return None
        return self._trees[tree]

    def _keep(self, tree: bytes, entries: list[Entry]) -> None:
        self._trees[tree] = entries
        if len(self._trees) > KEPT_TREES:
            del self._trees[next(iter(self._trees))]

    def _rebuilt(self, tree: bytes, changes: dict[tuple[bytes, ...], Change], depth: int) -> bytes:
        """The raw id of `tree` with `changes` (paths whose first `depth` parts lead to it)."""
        read = self._entries(tree)
        if read is None:
            raise LookupError(tree.hex())
        entries = {entry[1]: entry for entry in read}
        below: dict[bytes, dict[tuple[bytes, ...], Change]] = {}
        for parts, change in changes.items():
            name = parts[depth]
            if len(parts) == depth + 1:
                if change is None:
                    entries.pop(name, None)
                else:
                    entries[name] = (change[0], name, change[1])
            else:
                below.setdefault(name, {})[parts] = change
        for name, inner in below.items():
            subtree = self._rebuilt(entries[name][2], inner, depth + 1)
            if subtree != self._empty:
                entries[name] = (_TREE, name, subtree)
            else:
                entries.pop(name)  # git keeps no empty tree
        content = serialize_tree(entries.values())
        raw = self._write(b"tree", content)
        self._keep(raw, parse_tree(content, self._id_size))
        return raw

    def _blob(self, path: Path) -> bytes | None:
        try:  # a link, a FIFO, a device or a file over the cap: git does it
            content = read_regular(path, MAX_LOOSE_BYTES)
        except OSError:
            return None
        return self._write(b"blob", content)

    def _write(self, kind: bytes, content: bytes) -> bytes:
        """The raw id of object `kind` `content`, written loose unless the store has it there."""
        data = kind + b" %d\0" % len(content) + content
        raw = hashlib.new(self._format, data).digest()
        name = raw.hex()
        target = self._objects / name[:2] / name[2:]
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            write_read_only(target, zlib.compress(data, 1))
        return raw
