"""Files navtui itself writes into an object store (loose objects, the store's small packs):
each under a temporary name of its own in the same directory, then renamed to its name."""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from pathlib import Path

# git's `prune` removes stale `tmp_obj_*` files, so one left by a killed navtui goes with them.
_PREFIX = "tmp_obj_navtui_"


def write_read_only(target: Path, data: bytes) -> None:
    """`target` holding `data`, read-only, appearing whole or not at all. The temporary name
    is unique per call, so threads writing into one store (batch worktrees share the
    repository's objects) never write through each other's files."""
    fd, temporary = tempfile.mkstemp(prefix=_PREFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), 0o444)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def store_loose(objects: Path, digest: str, compressed: bytes) -> None:
    """Write a loose object as git does: into its fan-out directory under a temporary name,
    renamed to its name (an object already there is the same object and is kept)."""
    directory = objects / digest[:2]
    target = directory / digest[2:]
    if target.exists():
        return
    if not directory.is_dir():
        _make_fanout(directory)
    write_read_only(target, compressed)


def store_object(objects: Path, object_format: str, kind: bytes, content: bytes) -> str:
    """The id of object `kind` `content` (`object_format` sha1 or sha256), written loose into
    `objects` unless it is there."""
    data = kind + b" %d\0" % len(content) + content
    digest = hashlib.new(object_format, data).hexdigest()
    store_loose(objects, digest, zlib.compress(data, 1))
    return digest


def _make_fanout(directory: Path) -> None:
    """A fan-out directory with its parent's permission bits, as git makes it in a repository
    shared with a group (`core.sharedRepository`: group-writable, set-group-id)."""
    directory.mkdir(exist_ok=True)
    os.chmod(directory, directory.parent.stat().st_mode & 0o7777)
