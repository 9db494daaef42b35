"""Objects checked against their ids before undo writes them into the user's files.

git does not hash what it reads: a loose object the model rewrote in place under its own name
(with `--sandbox off` the git dir is writable) would come back as the user's file. Before a
restore, every tree it walks and every blob it writes is read and hashed; one that does not hash
to its id (or is missing) is taken from navtui's survival store, hashed too, and written into the
repository in place of the forged file. Where neither holds a true copy, the restore is refused
before it writes anything.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from agent_core.git.process import deadline
from agent_core.git.errors import WorkspaceError
from agent_core.git.process.kept_process import stop
from agent_core.git.objects.object_files import store_loose
from agent_core.git.process.runner import GitRunner

_TREE_MODE = b"40000"
_CHUNK = 1 << 20


def object_hash(object_id: str) -> "hashlib._Hash":
    """A hasher for the object format of `object_id` (SHA-1 or SHA-256, by its length)."""
    return hashlib.sha1() if len(object_id) == 40 else hashlib.sha256()


def sound_blob(object_id: str, data: bytes) -> bool:
    """Whether `data` is the content of blob `object_id`."""
    hasher = object_hash(object_id)
    hasher.update(b"blob %d\0" % len(data))
    hasher.update(data)
    return hasher.hexdigest() == object_id


def _read_one(stdout: IO[bytes], object_id: str) -> tuple[bytes, bytes] | None:
    """The next answer of `cat-file --batch`: (type, content; empty for a blob, which is
    hashed as it streams and never held), or None when git lacks it or it does not hash to its
    id."""
    header = stdout.readline().split()
    if len(header) != 3:
        return None
    kind, size = header[1], int(header[2])
    hasher = object_hash(object_id)
    hasher.update(kind + b" %d\0" % size)
    kept = []
    left = size
    while left:
        chunk = stdout.read(min(left, _CHUNK))
        if not chunk:
            raise WorkspaceError(f"git stopped while reading object {object_id}")
        hasher.update(chunk)
        if kind != b"blob":
            kept.append(chunk)
        left -= len(chunk)
    stdout.read(1)
    if hasher.hexdigest() != object_id:
        return None
    return kind, b"".join(kept)


def _read_all(git: GitRunner, ids: list[str]) -> list[tuple[bytes, bytes] | None]:
    """`_read_one` of each of `ids`, from one `git cat-file --batch` (asked all at once)."""
    if not ids:
        return []
    process = deadline.popen(
        git.argv("cat-file", "--batch"), cwd=git.root, env=git.base_env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    request = "".join(f"{i}\n" for i in ids).encode()
    feeder = threading.Thread(target=_feed, args=(process.stdin, request), daemon=True)
    feeder.start()
    try:
        with deadline.watched(process, git.root):
            return [_read_one(process.stdout, object_id) for object_id in ids]
    finally:
        stop(process)
        feeder.join()


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except OSError:  # git went away; the reader reports it
        pass


def _entries(contents: dict[str, tuple[bytes, bytes]], tree: str) -> dict[bytes, tuple[bytes, str]]:
    """The entries of `tree` as read into `contents` (none for "": no tree on that side)."""
    if not tree:
        return {}
    kind, content = contents[tree]
    if kind != b"tree":
        raise WorkspaceError(f"{tree[:10]} is not a tree in the repository")
    return tree_entries(content, len(tree) // 2)


def tree_entries(content: bytes, id_size: int) -> dict[bytes, tuple[bytes, str]]:
    """name -> (mode, id) of a tree object's content."""
    entries = {}
    at = 0
    while at < len(content):
        space = content.index(b" ", at)
        nul = content.index(b"\0", space)
        raw = content[nul + 1:nul + 1 + id_size]
        entries[content[space + 1:nul]] = (content[at:space], raw.hex())
        at = nul + 1 + id_size
    return entries


class ObjectCheck:
    """Checks the objects of repository `git` (whose loose objects are at `objects`) and puts
    back forged ones from the store `store_git` reads."""

    def __init__(self, git: GitRunner, objects: Path, store_git: GitRunner) -> None:
        self._git = git
        self._objects = objects
        self._store_git = store_git

    def trees(self, current: str, target: str) -> None:
        """Make sound every tree a walk from `current` to `target` reads (the subtrees that
        differ, on both sides), as `ensure` does."""
        level = [(current, target)]
        while level:
            contents = self._sound([i for pair in level for i in pair if i])
            following = []
            for old, new in level:
                old_entries = _entries(contents, old)
                new_entries = _entries(contents, new)
                for name in old_entries.keys() | new_entries.keys():
                    was, now = old_entries.get(name), new_entries.get(name)
                    if was == now:
                        continue
                    old_tree = was[1] if was and was[0] == _TREE_MODE else ""
                    new_tree = now[1] if now and now[0] == _TREE_MODE else ""
                    if old_tree or new_tree:
                        following.append((old_tree, new_tree))
            level = following

    def ensure(self, ids: Iterable[str]) -> None:
        """Every object of `ids` sound in the repository: one that git lacks or that does not
        hash to its id is written again from the store's true copy; raises WorkspaceError,
        naming them, when the store has none either."""
        self._sound(list(ids))

    def _sound(self, ids: list[str]) -> dict[str, tuple[bytes, bytes]]:
        """`ensure` of `ids`; their (type, content) as read (content only for non-blobs)."""
        wanted = list(dict.fromkeys(i for i in ids if i))
        found = dict(zip(wanted, _read_all(self._git, wanted)))
        sound = {i: read for i, read in found.items() if read is not None}
        bad = [i for i in wanted if i not in sound]
        if not bad:
            return sound
        for object_id, (kind, content) in self._true_copies(bad).items():
            self._replace(object_id, kind, content)
        sound.update((i, read) for i, read in zip(bad, _read_all(self._git, bad)) if read)
        still = [i for i in bad if i not in sound]
        if still:
            raise WorkspaceError(
                f"object {', '.join(i[:10] for i in still)} in the repository does not hash to "
                "its id (rewritten outside git's commands) and navtui's store holds no true "
                "copy: nothing was written. `git fsck` names what else is damaged."
            )
        return sound

    def _true_copies(self, ids: list[str]) -> dict[str, tuple[bytes, bytes]]:
        """(type, content) of each of `ids` the store holds under its true id."""
        copies = {}
        for object_id, (kind, content) in zip(ids, _contents(self._store_git, ids)):
            if kind is None:
                continue
            hasher = object_hash(object_id)
            hasher.update(kind + b" %d\0" % len(content))
            hasher.update(content)
            if hasher.hexdigest() == object_id:
                copies[object_id] = (kind, content)
        return copies

    def _replace(self, object_id: str, kind: bytes, content: bytes) -> None:
        """The loose file of `object_id` (whatever the model left there, never followed)
        replaced by the true object."""
        path = self._objects / object_id[:2] / object_id[2:]
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            return
        data = kind + b" %d\0" % len(content) + content
        store_loose(self._objects, object_id, zlib.compress(data, 1))


def _contents(git: GitRunner, ids: list[str]) -> list[tuple[bytes | None, bytes]]:
    """(type, content) of each of `ids` from one `cat-file --batch` (None: missing)."""
    request = "".join(f"{i}\n" for i in ids).encode()
    out = deadline.run(git.argv("cat-file", "--batch"), cwd=git.root, env=git.base_env,
                       input=request, stderr=subprocess.DEVNULL).stdout
    found: list[tuple[bytes | None, bytes]] = []
    at = 0
    for _ in ids:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) != 3:
            found.append((None, b""))
            continue
        size = int(header[2])
        found.append((header[1], out[at:at + size]))
        at += size + 1
    return found
