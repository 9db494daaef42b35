"""Streamed Markdown split into finished blocks and the tail still being written.

A block ends at a blank line outside a fenced code block, unless the next line is indented (the
continuation of a list item, or an indented code block, which belong with what comes before).
Once finished, a block's rendering never changes, so it is rendered once; only the tail is
rendered again as text arrives. Within the tail, `cut` says where its last item begins (a list
item's first line, or the next line of a fenced code block): what comes before it looks the same
rendered alone, so it need be rendered again only when a line completes.
"""

from __future__ import annotations

import re

# The opening line of a fenced code block: up to 3 spaces, then 3+ backticks or tildes.
FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
# The first line of a list item: up to 3 spaces, a bullet or a number, then a space.
LIST_ITEM = re.compile(r" {0,3}([-*+]|\d{1,9}[.)])( |$)")
STARTED_ITEM = re.compile(r" {0,3}([-*+]|\d{1,9}[.)]) ")  # a line being written that is one


class MarkdownBlocks:
    """Text that grows at its end (`add`), as finished blocks (`finished`) and a `tail`."""

    def __init__(self) -> None:
        self.text = ""
        self.finished: list[str] = []
        self._tail_start = 0  # where the block still being written begins
        self._scanned = 0  # where the first line not yet looked at begins
        self._fence = ""  # the opening fence while inside a fenced code block
        self._after_blank = False  # the last line looked at was blank (outside a fence)
        self._cut = 0  # where the tail's last item begins (see `cut`)
        self._cut_fence = ""  # the fence's opening line when the cut is inside a code block
        self._fence_line = ""

    @property
    def cut(self) -> tuple[int, str]:
        """(offset in `tail`, opening line): the tail's text from the offset on is its last item,
        rendered like the rest when given after the opening line (the code block it is part of;
        empty outside one). Text before the offset changes only when a line completes."""
        if not self._fence and STARTED_ITEM.match(self.text, self._scanned):
            return self._scanned - self._tail_start, ""
        return max(self._cut - self._tail_start, 0), self._cut_fence

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
                self._cut, self._cut_fence = self._tail_start, ""  # the whole tail, block and all
            elif line.strip():  # a blank code line stays with the next (rich drops trailing ones)
                self._cut, self._cut_fence = start + len(line) + 1, self._fence_line
            return
        if not line.strip():
            self._after_blank = True
            return
        if self._after_blank and line[0] not in " \t":
            block = self.text[self._tail_start : start].strip("\n")
            if block.strip():
                self.finished.append(block)
            self._tail_start = start
            self._cut, self._cut_fence = start, ""
        self._after_blank = False
        if LIST_ITEM.match(line):
            self._cut, self._cut_fence = start, ""
        opening = FENCE_OPEN.match(line)
        if opening:
            self._fence, self._fence_line = opening.group(1), line
