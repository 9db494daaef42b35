"""A small pack (and its index) of given loose objects, written without a git process: how the
survival store keeps the few objects a step made (two files instead of one per object).

The format is git's pack v2 with an index v2 (gitformat-pack): objects whole, none as deltas.
Each object's content is checked against its name on the way in.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path

from agent_core.git.objects.object_files import write_read_only
from agent_core.git.process.safe_files import open_regular

_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
# Objects, and steps, larger than this are left to `git pack-objects`, which streams them.
MAX_LOOSE_BYTES = 8_000_000


def read_loose(objects: Path, object_id: str) -> tuple[bytes, bytes] | None:
    """(type, content) of loose object `object_id` in `objects`, or None when it is not a
    regular loose file there, is over `MAX_LOOSE_BYTES` or does not hash to its name."""
    path = objects / object_id[:2] / object_id[2:]
    try:
        fd = open_regular(path, MAX_LOOSE_BYTES)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            unpacker = zlib.decompressobj()
            data = unpacker.decompress(handle.read(), MAX_LOOSE_BYTES + 100)
            if unpacker.unconsumed_tail:
                return None
    except (OSError, zlib.error):
        return None
    header, _, content = data.partition(b"\0")
    kind, _, size = header.partition(b" ")
    digest = (hashlib.sha1 if len(object_id) == 40 else hashlib.sha256)(data).hexdigest()
    if digest != object_id or kind not in _TYPES or size != b"%d" % len(content):
        return None
    return kind, content


def write_pack(directory: Path, objects: dict[str, tuple[bytes, bytes]]) -> None:
    """`pack-<checksum>.pack` and `.idx` in `directory` holding `objects` (id -> (type,
    content)); each written under a temporary name first, the index last (a pack without an
    index is never read)."""
    hash_new = hashlib.sha1 if len(next(iter(objects))) == 40 else hashlib.sha256
    body = [b"PACK", struct.pack(">II", 2, len(objects))]
    offset = 12
    entries = []
    for object_id, (kind, content) in objects.items():
        size = len(content)
        header = bytearray([(_TYPES[kind] << 4) | (size & 0x0F)])
        size >>= 4
        while size:
            header[-1] |= 0x80
            header.append(size & 0x7F)
            size >>= 7
        chunk = bytes(header) + zlib.compress(content, 1)
        entries.append((bytes.fromhex(object_id), zlib.crc32(chunk), offset))
        body.append(chunk)
        offset += len(chunk)
    pack = b"".join(body)
    checksum = hash_new(pack).digest()
    pack += checksum
    entries.sort()
    fanout = [0] * 256
    for name, _, _ in entries:
        fanout[name[0]] += 1
    total = 0
    for byte in range(256):
        total += fanout[byte]
        fanout[byte] = total
    index = b"".join([
        b"\377tOc", struct.pack(">I", 2), struct.pack(">256I", *fanout),
        *(name for name, _, _ in entries), *(struct.pack(">I", crc) for _, crc, _ in entries),
        *(struct.pack(">I", where) for _, _, where in entries), checksum,
    ])
    index += hash_new(index).digest()
    stem = directory / f"pack-{checksum.hex()}"
    for suffix, data in ((".pack", pack), (".idx", index)):
        write_read_only(stem.with_suffix(suffix), data)
