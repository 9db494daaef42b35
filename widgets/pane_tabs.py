"""Tab labels over a rule that marks the active one, drawn by one widget."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from widgets._css import css_beside


class PaneTabs(Widget, can_focus=True):
    """Tabs (id -> label); `active` is the id of the one shown. Choosing a tab (a click, or
    left and right while focused) posts `Chosen`.

    One Line API widget of two rows: a switch repaints them. Textual's `Tabs` is a widget per
    tab, and a switch restyles them, scrolls the active one into view and moves the underline a
    frame later: several milliseconds per key where the pane's own switch is a repaint.
    """

    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "pane-tabs--tab", "pane-tabs--active", "pane-tabs--rule", "pane-tabs--highlight",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous tab", show=False),
        Binding("right", "step(1)", "Next tab", show=False),
    ]

    active: reactive[str] = reactive("")

    class Chosen(Message):
        """The user chose tab `tab`."""

        def __init__(self, tab: str) -> None:
            self.tab = tab
            super().__init__()

    def __init__(self, tabs: dict[str, str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tabs = dict(tabs)
        self.set_reactive(PaneTabs.active, next(iter(self.tabs)))

    def spans(self) -> list[tuple[str, int, int]]:
        """Each tab's id and the columns its label takes (start, end), one space either side."""
        spans, x = [], 0
        for tab, label in self.tabs.items():
            width = cell_len(label) + 2
            spans.append((tab, x, x + width))
            x += width
        return spans

    def choose(self, tab: str) -> None:
        if tab in self.tabs and tab != self.active:
            self.active = tab
            self.post_message(self.Chosen(tab))

    def action_step(self, by: int) -> None:
        ids = list(self.tabs)
        self.choose(ids[(ids.index(self.active) + by) % len(ids)])

    def on_click(self, event: events.Click) -> None:
        for tab, start, end in self.spans():
            if start <= event.x < end:
                self.choose(tab)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        return self._labels(width) if y == 0 else self._rule(width)

    def _labels(self, width: int) -> Strip:
        plain = self.get_component_rich_style("pane-tabs--tab")
        shown = self.get_component_rich_style("pane-tabs--active")
        segments = [Segment(f" {label} ", shown if tab == self.active else plain)
                    for tab, label in self.tabs.items()]
        return Strip(segments).extend_cell_length(width, plain).crop(0, width)

    def _rule(self, width: int) -> Strip:
        """A bar under every tab, lit under the active one's label; half bars either side of it."""
        rule = self.get_component_rich_style("pane-tabs--rule")
        lit = self.get_component_rich_style("pane-tabs--highlight")
        start, end = next((s + 1, e - 1) for tab, s, e in self.spans() if tab == self.active)
        start, end = min(start, width), min(end, width)
        segments = [Segment("━" * max(start - 1, 0), rule)]
        if start > 0:
            segments.append(Segment("╸", rule))
        segments.append(Segment("━" * (end - start), lit))
        if end < width:
            segments += [Segment("╺", rule), Segment("━" * (width - end - 1), rule)]
        return Strip(segments).crop(0, width)
