"""Streamed Markdown split into finished blocks and the tail still being written.

A block ends at a blank line outside a fenced code block, unless the next line is indented (the
continuation of a list item, or an indented code block, which belong with what comes before).
Once finished, a block's rendering never changes, so it is rendered once; only the tail is
rendered again as text arrives.
"""

from __future__ import annotations

import re

# The opening line of a fenced code block: up to 3 spaces, then 3+ backticks or tildes.
FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")


class MarkdownBlocks:
    """Text that grows at its end (`add`), as finished blocks (`finished`) and a `tail`."""

    def __init__(self) -> None:
        self.text = ""
        self.finished: list[str] = []
        self._tail_start = 0  # where the block still being written begins
        self._scanned = 0  # where the first line not yet looked at begins
        self._fence = ""  # the opening fence while inside a fenced code block
        self._after_blank = False  # the last line looked at was blank (outside a fence)

    @property
    def tail(self) -> str:
        """The block still being written (may be whitespace only)."""
        return self.text[self._tail_start :]

    def add(self, fragment: str) -> int:
        """Append `fragment`; returns how many blocks it finished."""
        self.text += fragment
        before = len(self.finished)
        while (end := self.text.find("\n", self._scanned)) >= 0:
            start, self._scanned = self._scanned, end + 1
            self._look_at(self.text[start:end], start)
        return len(self.finished) - before

    def _look_at(self, line: str, start: int) -> None:
        """One complete line (without its newline) starting at offset `start`."""
        if self._fence:
            closing = line.strip()
            if closing.startswith(self._fence) and not closing.strip(self._fence[0]):
                self._fence = ""
            return
        if not line.strip():
            self._after_blank = True
            return
        if self._after_blank and line[0] not in " \t":
            block = self.text[self._tail_start : start].strip("\n")
            if block.strip():
                self.finished.append(block)
            self._tail_start = start
        self._after_blank = False
        opening = FENCE_OPEN.match(line)
        if opening:
            self._fence = opening.group(1)
