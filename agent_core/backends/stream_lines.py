"""A server's reply as text lines, with bounded memory whatever the server sends.

httpx's `iter_lines` keeps a line in memory until its newline comes and its decoders inflate a
gzip chunk whole, so 150 KB of compressed bytes without a newline can grow the process by
hundreds of megabytes. Here the raw bytes are read and inflated piece by piece
(`zlib.decompressobj` with `max_length`), and a line past `MAX_LINE` bytes or a reply past
`MAX_REPLY` bytes (both counted after decompression) raises `StreamTooLarge`. navtui asks for
`Accept-Encoding: identity`; a server that compresses anyway is read with gzip or deflate, and
any other encoding is refused.
"""

from __future__ import annotations

import codecs
import re
import zlib
from collections.abc import Iterable, Iterator

import httpx

from agent_core.backends.faults import StreamMalformed, StreamTooLarge

MAX_LINE = 4 * 1024 * 1024  # one SSE line (a whole chunk of JSON)
MAX_REPLY = 64 * 1024 * 1024  # one reply, all lines together
INFLATE_STEP = 64 * 1024  # bytes inflated at a time
_LINE_END = re.compile("(\r\n|\r|\n)")


def _inflater(encoding: str) -> zlib._Decompress | None:
    """A decompressor for the reply's Content-Encoding; None for none."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return zlib.decompressobj()
    raise StreamMalformed(f"the server sent a reply in an encoding navtui does not read ({coding!r})")


def _inflate(raw: Iterable[bytes], encoding: str) -> Iterator[bytes]:
    """The reply's bytes, decompressed at most INFLATE_STEP at a time."""
    inflater = _inflater(encoding)
    if inflater is None:
        yield from raw
        return
    try:
        for data in raw:
            while data:
                out = inflater.decompress(data, INFLATE_STEP)
                data = inflater.unconsumed_tail
                if out:
                    yield out
        while not inflater.eof and (out := inflater.decompress(b"", INFLATE_STEP)):
            yield out
    except zlib.error as exc:
        raise StreamMalformed(f"the server's compressed reply is damaged ({exc})") from None


def bounded_lines(raw: Iterable[bytes], encoding: str = "", *, max_line: int = MAX_LINE,
                  max_reply: int = MAX_REPLY) -> Iterator[str]:
    """Decoded lines (without their endings, `\\r\\n`, `\\n` or `\\r`: the SSE ones only, never
    the other Unicode line breaks a JSON string may hold) of a reply's raw bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    total = 0
    after_cr = False  # the last piece ended in `\r`: a `\n` opening the next one belongs to it
    for data in _inflate(raw, encoding):
        total += len(data)
        if total > max_reply:
            raise StreamTooLarge(f"the server's reply passed {max_reply // 2**20} MiB")
        text = decoder.decode(data)
        if after_cr and text.startswith("\n"):
            text = text[1:]
        if text:
            after_cr = text.endswith("\r")
        parts = _LINE_END.split(pending + text)
        pending = parts.pop()
        if len(pending) > max_line:
            raise StreamTooLarge(f"the server sent a line longer than {max_line // 2**20} MiB")
        yield from parts[0::2]
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending


def read_capped(response: httpx.Response, cap: int) -> bytes:
    """At most `cap` bytes of a (short) reply's body, decompressed in steps."""
    out = b""
    for data in _inflate(response.iter_raw(), response.headers.get("content-encoding", "")):
        out += data
        if len(out) >= cap:
            return out[:cap]
    return out
