"""Bounded capture of command output: keeps the head and the tail, counts what was dropped."""

from __future__ import annotations

import re

_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# UTF-8 continuation bytes: every other byte starts a character.
_CONTINUATION = bytes(range(0x80, 0xC0))


class BoundedOutput:
    """Holds at most `limit` bytes of a stream: its first half and its last half.

    Memory stays O(limit) however much is fed, so a flood (`yes`) cannot exhaust it. `chars`
    counts the characters of everything fed (what a clipping note must report).
    """

    def __init__(self, limit: int) -> None:
        self.head_limit = max(limit // 2, 1)
        self.tail_limit = max(limit - self.head_limit, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.chars = 0
        self.newlines = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.chars += len(data.translate(None, _CONTINUATION))
        self.newlines += data.count(b"\n")
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def elided(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> tuple[str, bool]:
        """The kept output as clean text, and whether anything was cut from the middle."""
        if self.elided <= 0:
            return clean(bytes(self.head + self.tail)), False
        lines = self.newlines - self.head.count(b"\n") - self.tail.count(b"\n")
        marker = (
            f"\n[... {self.elided} bytes of output elided ({lines} lines; total {self.total} bytes); "
            "redirect the output to a file and inspect it with head, tail or grep ...]\n"
        )
        return clean(bytes(self.head)) + marker + clean(bytes(self.tail)), True


def clean(data: bytes) -> str:
    """Decode as UTF-8 (invalid bytes replaced), drop terminal escapes and control characters."""
    text = _ANSI.sub(b"", data).decode("utf-8", errors="replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("\ufffd", text)
