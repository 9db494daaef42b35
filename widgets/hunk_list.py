"""The hunks of an edit proposal, each with the user's word on it, one of them current: the
action card's diff preview while a proposal of more than one hunk waits.

One Line API widget: a key that moves to another hunk, keeps or drops one repaints that hunk's
lines only (a 300-hunk diff costs a key no more than a 3-hunk one); the diff is highlighted once,
when it is shown, and a hunk again only when the user's word on it changes what it shows.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import ClassVar

from textual.content import Content
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from agent_core.hunks import KEEP, Hunk, HunkChoice
from agent_core.sanitize import visible
from widgets._css import css_beside
from widgets.diff_view import highlight_diff

MARK = "▶"


def hunk_state(hunk: Hunk, choice: HunkChoice) -> str:
    """`kept`, `dropped` or `edited`, as the hunk's header says it."""
    if not choice.keep:
        return "dropped"
    return "edited" if choice.text is not None and choice.text != "".join(hunk.new) else "kept"


def _body(hunk: Hunk, choice: HunkChoice) -> list[str]:
    """The hunk's diff lines as the user's word leaves them (an edited one: the user's lines)."""
    if choice.keep and choice.text is not None:
        shown = Hunk(hunk.number, hunk.at, hunk.end, hunk.old, tuple(choice.text.splitlines()),
                     hunk.old_line, hunk.new_line, hunk.before, hunk.after)
        return [visible(line) for line in shown.diff_lines()[1:]]
    return [visible(line) for line in hunk.diff_lines()[1:]]


class HunkList(Widget):
    """Shows `hunks` with the user's `choices` (by hunk number; none: kept) and the `current`
    hunk (an index) marked; the screen's keys change them through `move` and `choose`."""

    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "hunk-list--header", "hunk-list--current", "hunk-list--body",
    }

    def __init__(self, *, dropped: str = "dropped", id: str | None = None) -> None:
        """`dropped`: what a dropped hunk's header calls it (a step's hunk is put back)."""
        super().__init__(id=id)
        self.dropped = dropped
        self.hunks: tuple[Hunk, ...] = ()
        self.choices: dict[int, HunkChoice] = {}
        self.paths: tuple[str, ...] = ()  # per hunk, its file (none: the one file of an edit)
        self.current = 0
        self._bodies: list[list[Content]] = []  # per hunk: its highlighted body lines
        self._starts: list[int] = []  # per hunk: its header's line
        self._strips: dict[int, Strip] = {}
        self._width = self._total = 0

    # --- what is shown --------------------------------------------------------------------

    def show_hunks(self, hunks: Sequence[Hunk], paths: Sequence[str] = ()) -> None:
        """Show `hunks` (of the files `paths`, when they span several), all kept, the first one
        current."""
        self.hunks, self.choices, self.current = tuple(hunks), {}, 0
        self.paths = tuple(paths)
        texts = ["\n".join(_body(hunk, KEEP)) for hunk in self.hunks]
        lines = highlight_diff("\n".join(texts)).split("\n") if texts else []
        self._bodies, at = [], 0
        for text in texts:
            count = text.count("\n") + 1
            self._bodies.append(lines[at:at + count])
            at += count
        self._layout()

    @property
    def choice(self) -> HunkChoice:
        """The user's word on the current hunk."""
        return self.choices.get(self.hunks[self.current].number, KEEP) if self.hunks else KEEP

    @property
    def changed(self) -> bool:
        """Whether any hunk is dropped or edited (else a plain approve runs the proposal)."""
        return any(hunk_state(h, self.choices.get(h.number, KEEP)) != "kept" for h in self.hunks)

    def move(self, delta: int) -> None:
        """Make the hunk `delta` places on current (within the list), and show it."""
        if not self.hunks:
            return
        before = self.current
        self.current = max(0, min(len(self.hunks) - 1, self.current + delta))
        if self.current != before:
            self._repaint(before)
            self._repaint(self.current)
        self._show_current()

    def choose(self, choice: HunkChoice) -> None:
        """The user's word on the current hunk; its lines are drawn again (all the hunks laid
        out again only when an edit changed its line count)."""
        if not self.hunks:
            return
        hunk, index = self.hunks[self.current], self.current
        count = len(self._bodies[index])
        self.choices[hunk.number] = choice
        body = "\n".join(_body(hunk, choice))
        self._bodies[index] = (highlight_diff(body) if choice.keep
                               else Content(body).stylize("dim strike")).split("\n")
        if len(self._bodies[index]) != count:
            self._layout()
        else:
            self._repaint(index)

    # --- lines ----------------------------------------------------------------------------

    def _header(self, index: int) -> Content:
        hunk = self.hunks[index]
        mark = MARK if index == self.current else " "
        state = hunk_state(hunk, self.choices.get(hunk.number, KEEP)).replace("dropped", self.dropped)
        where = f"{visible(self.paths[index])} {hunk.where}" if self.paths else hunk.where
        return Content(f"{mark} hunk {index + 1}/{len(self.hunks)} · {state:<7} {hunk.header}"
                       f"  {where}")

    def _count(self, index: int) -> int:
        """How many lines hunk `index` takes (its header and body)."""
        return 1 + len(self._bodies[index])

    def _layout(self) -> None:
        """Lay the hunks out again (their line counts changed)."""
        self._starts, at, widest = [], 0, 0
        for index in range(len(self.hunks)):
            self._starts.append(at)
            at += self._count(index)
            lines = [self._header(index), *self._bodies[index]]
            widest = max(widest, max(line.cell_length for line in lines))
        self._total, self._width = at, widest + 2
        self._strips.clear()
        self.refresh(layout=True)

    def _repaint(self, index: int) -> None:
        start, count = self._starts[index], self._count(index)
        for y in range(start, start + count):
            self._strips.pop(y, None)
        self.refresh(Region(0, start, max(self.size.width, self._width), count))

    def _show_current(self) -> None:
        """Scroll the card so the current hunk's header (and as much of it as fits) shows, once
        the lines laid out now are in place."""
        self.call_after_refresh(self._scroll_to_current)

    def _scroll_to_current(self) -> None:
        parent = self.parent
        if isinstance(parent, Widget) and self._starts:
            top = self.virtual_region.y + self._starts[self.current]
            parent.scroll_to_region(Region(0, top, 1, min(self._count(self.current), 8)),
                                    animate=False, immediate=True)

    # --- drawing --------------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._total

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return self._width

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strip = self._strips.get(y)
        if strip is None:
            strip = self._strips[y] = self._draw(y)
        return strip.crop_extend(0, width, self.get_visual_style("hunk-list--body").rich_style)

    def _draw(self, y: int) -> Strip:
        if not self._starts or y >= self._total:
            return Strip.blank(1)
        index = bisect_right(self._starts, y) - 1
        offset = y - self._starts[index]
        if offset == 0:
            kind = "current" if index == self.current else "header"
            style = self.get_visual_style(f"hunk-list--{kind}")
            content = self._header(index)
            return Content.to_strips(self, content, max(self._width, self.size.width), 1, style)[0]
        content = self._bodies[index][offset - 1]
        style = self.get_visual_style("hunk-list--body")
        return Content.to_strips(self, content, max(1, content.cell_length), 1, style)[0]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
