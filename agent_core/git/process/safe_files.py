"""How navtui reads and writes files the model could have reached (anything under `.git` with
`--sandbox off`, the working tree always): no symlink is followed, only regular files are
opened (a FIFO or a device is never waited on or read without end), sizes are bounded before
anything is read, hashed or copied, and every write goes to a new file of navtui's own
(`O_EXCL`, never through a link) renamed into place.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20
# An index over this is not git's (a 1M-file repository's is ~100 MB).
MAX_INDEX_BYTES = 4 << 30


class NotRegular(OSError):
    """The path is a link, a FIFO, a device, a directory or over its size cap."""


def open_regular(path: Path | str, cap: int | None = None) -> int:
    """A read descriptor on `path`, a regular file (no link followed, a FIFO never waited on)
    of at most `cap` bytes; raises OSError (NotRegular for the rest)."""
    fd = os.open(path, _READ)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        if cap is not None and found.st_size > cap:
            raise NotRegular(f"{path} is over {cap} bytes ({found.st_size})")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, cap: int) -> bytes:
    """The bytes of regular file `path` (see `open_regular`); a file that grew past `cap` while
    read raises NotRegular too."""
    with os.fdopen(open_regular(path, cap), "rb") as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise NotRegular(f"{path} is over {cap} bytes")
    return data


def read_text_or_none(path: Path | str, cap: int, encoding: str = "utf-8") -> str | None:
    """`read_regular` as text; None when it is missing, not regular, too big or undecodable."""
    try:
        return read_regular(path, cap).decode(encoding)
    except (OSError, UnicodeDecodeError):
        return None


def copy_regular(source: Path, target: Path, cap: int, mode: int = 0o444) -> None:
    """A copy of regular file `source` (at most `cap` bytes, no link followed) at `target`,
    sharing no inode with it: written into a new file beside `target`, then renamed over it."""
    with os.fdopen(open_regular(source, cap), "rb") as original:
        write_new(target, lambda copy: _copy_bounded(original, copy, cap, source), mode)


def _copy_bounded(original: IO[bytes], copy: IO[bytes], cap: int, source: Path) -> None:
    left = cap + 1
    while chunk := original.read(min(_CHUNK, left)):
        copy.write(chunk)
        left -= len(chunk)
        if left <= 0:
            raise NotRegular(f"{source} grew over {cap} bytes while copied")


def write_bytes(target: Path, data: bytes, mode: int = 0o644) -> None:
    """`target` holding `data`, appearing whole (see `write_new`)."""
    write_new(target, lambda handle: handle.write(data), mode)


def write_new(target: Path, fill: Callable[[IO[bytes]], object], mode: int = 0o644) -> None:
    """`fill(handle)` into a new file of a name nobody can guess beside `target` (created with
    O_EXCL, so nothing the model planted is written through), renamed over `target`: a link
    planted at `target` is replaced, never followed."""
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name[:40]}.navtui-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
            os.fchmod(handle.fileno(), mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def open_append(path: Path) -> int:
    """A descriptor appending to navtui's own file `path` (made when missing): never through a
    link, never on a FIFO or device (raises OSError)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                 | os.O_CLOEXEC, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def append_owned(path: Path, data: bytes) -> None:
    """Append `data` to navtui's own file `path` (see `open_append`)."""
    fd = open_append(path)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)
