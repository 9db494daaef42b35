"""Every step of the session with its status; choosing one asks to show it in full.

A Line API widget: one line per step, drawn on demand. Adding a step or changing one repaints
that line only (no layout of the screen, no rebuild of the other lines), so a step costs the same
with 5 entries or 500.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from agent_core.actions import Submit
from agent_core.sanitize import visible
from agent_core.hunks import review_summary
from agent_core.steps import EditAction, KeepHunks, Origin, Reject, StepRecord, StepStatus
from widgets._css import css_beside
from widgets.action_card import action_summary, user_edits_summary
from widgets.steady_scrollbars import SteadyScrollbars

# Status -> (icon, style) for each timeline entry.
STATUS_LOOK: dict[str, tuple[str, str]] = {
    "pending": ("?", "$text-accent"),
    "running": ("…", "$text-warning"),
    "executed": ("✓", "$text-success"),
    "rejected": ("✗", "$text-error"),
    "user": ("$", "$text-secondary"),
    "submitted": ("★", "$text-success"),
}


def step_status(record: StepRecord) -> str:
    """The timeline's word for a step that is over."""
    if record.origin is Origin.USER:
        return "user"
    if isinstance(record.decision, Reject):
        return "rejected"
    if isinstance(record.action, Submit) and record.status is not StepStatus.REVIEWED:
        return "submitted"  # (a submit answered with a review message did not finish)
    return "executed"


def step_line(record: StepRecord) -> str:
    """The step's one line: its action (as run, if edited) or the user's own edits."""
    if record.status is StepStatus.USER_EDITS:
        return user_edits_summary(record)
    summary = action_summary(record.action or record.proposed.action)
    if isinstance(record.decision, KeepHunks):
        return f"{summary} ({review_summary(record.decision.hunks)})"
    return f"{summary} (edited)" if isinstance(record.decision, EditAction) else summary


@dataclass
class TimelineEntry:
    index: int
    status: str
    summary: str


class StepTimeline(SteadyScrollbars, can_focus=True):
    """Entries keyed by step index, in index order; `set_step` adds or updates one.

    `highlighted` is the position (0-based line) of the highlighted entry, or None; it follows
    each new last entry while it is on the last one (the newest step is the one selected until
    the user picks another). While the last entry is in view, a new one is brought into view
    (the list follows the session); once the user scrolls up, it stays where they left it.
    """

    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES: ClassVar[set[str]] = {"step-timeline--entry", "step-timeline--highlighted"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "cursor_down", "Down", show=False),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("pagedown", "page_down", "Page Down", show=False),
        Binding("pageup", "page_up", "Page Up", show=False),
        Binding("enter", "select", "Select", show=False),
    ]

    highlighted: reactive[int | None] = reactive(None, init=False)

    class StepChosen(Message):
        """The user chose step `index` (Enter or click)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class StepHighlighted(Message):
        """The highlight moved to step `index` (None: no entry is highlighted)."""

        def __init__(self, index: int | None) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[int, TimelineEntry] = {}
        self.steps: list[int] = []  # step indices in display order
        self.border_title = "Steps"
        self._lines: dict[int, tuple[tuple[object, ...], Strip]] = {}  # index -> (key, line)
        self._blank = 0  # blank lines kept below the last entry (see `_append`)

    # --- entries ------------------------------------------------------------------------------

    def set_step(self, index: int, status: str, summary: str | None = None) -> None:
        """Add step `index` or change its status (and summary when given); repaints its line."""
        summary = None if summary is None else visible(summary)
        entry = self.entries.get(index)
        if entry is None:
            self.entries[index] = TimelineEntry(index, status, summary or "")
            on_last = self.highlighted is None or self.highlighted == len(self.steps) - 1
            if self.steps and index < self.steps[-1]:
                self._insert(index)
                on_last = self.highlighted is None
            else:
                self._append(index)
            if on_last:
                self._follow(len(self.steps) - 1)
            return
        if entry.status == status and (summary is None or summary == entry.summary):
            return
        entry.status = status
        if summary is not None:
            entry.summary = summary
        self._refresh_position(self.position_of(index))

    def show_record(self, record: StepRecord) -> None:
        """Add or update the entry of a step that is over: its status word and its line."""
        self.set_step(record.index, step_status(record), step_line(record))

    def _append(self, index: int) -> None:
        """A new last entry. While the last entry is in view the list follows: a new entry below
        the view scrolls it by half a page, leaving blank lines that the next entries fill, so
        the whole list is redrawn once per half page rather than on every step."""
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        following = top <= len(self.steps) - 1 < top + height or not self.steps
        self.steps.append(index)
        position = len(self.steps) - 1
        if self._blank:
            self._blank -= 1  # the entry takes a blank line: the scrollable height stays
        else:
            self._grown()
        if following and height > 0 and position >= top + height:
            top = position - height // 2
            self._blank = top + height - len(self.steps)
            self._grown()
            self.scroll_to(y=top, animate=False, immediate=True)
        else:
            self._refresh_position(position)

    def drop_after(self, to_index: int) -> None:
        """Forget the steps after `to_index` (they were undone; new ones may reuse the numbers)."""
        for index in [i for i in self.steps if i > to_index]:
            self.drop(index)

    def drop(self, index: int) -> None:
        """Forget a step that never happened (e.g. a proposal dropped by an undo)."""
        if self.entries.pop(index, None) is None:
            return
        position = self.position_of(index)
        del self.steps[position]
        self._lines.pop(index, None)
        self._blank = 0
        self._grown()
        self.refresh()
        if self.highlighted is not None and self.highlighted >= len(self.steps):
            self.highlighted = len(self.steps) - 1 if self.steps else None

    def _follow(self, position: int) -> None:
        """Move the highlight to the entry just added (and drawn) without scrolling: `_append`
        decides what is in view, and a user who scrolled up stays where they are."""
        old = self.highlighted
        self.set_reactive(StepTimeline.highlighted, position)
        if old != position:
            self._refresh_position(old)
        self.post_message(self.StepHighlighted(self.highlighted_step))

    def position_of(self, index: int) -> int:
        """The line of step `index` (ValueError if it is not in the timeline)."""
        position = bisect_left(self.steps, index)
        if position == len(self.steps) or self.steps[position] != index:
            raise ValueError(f"step {index} is not in the timeline")
        return position

    @property
    def highlighted_step(self) -> int | None:
        """Index of the highlighted step, if any."""
        if self.highlighted is None or self.highlighted >= len(self.steps):
            return None
        return self.steps[self.highlighted]

    def highlight_step(self, index: int) -> None:
        """Move the highlight to step `index`."""
        self.highlighted = self.position_of(index)

    def _insert(self, index: int) -> None:
        """A step added out of order: every line from it down moves; the highlight keeps its step."""
        keep = self.highlighted_step
        insort(self.steps, index)
        self._grown()
        self.refresh()
        if keep is not None:
            self.highlighted = self.position_of(keep)

    def _grown(self) -> None:
        """The number of lines changed: the scrollable height follows, without laying out the screen.

        The widget's own size does not depend on its line count (its height comes from the
        layout around it), so only the scrollbars need to know; a scrollbar that appears or goes
        away changes the content width, and that does ask for a layout (Textual does it).
        """
        size = Size(self.scrollable_content_region.width, len(self.steps) + self._blank)
        self.set_reactive(ScrollView.virtual_size, size)
        if self.is_mounted:
            self._refresh_scrollbars()
            self._scroll_update(size)

    # --- drawing --------------------------------------------------------------------------------

    def _refresh_position(self, position: int | None) -> None:
        """Repaint one entry's line if it is in view."""
        if position is None:
            return
        y = position - self.scroll_offset.y
        if 0 <= y < self.scrollable_content_region.height:
            self.refresh(Region(0, y, self.scrollable_content_region.width, 1))

    def render_line(self, y: int) -> Strip:
        position = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if position >= len(self.steps):
            return Strip.blank(width, self.get_visual_style("step-timeline--entry").rich_style)
        entry = self.entries[self.steps[position]]
        classes = ["step-timeline--entry"]
        if position == self.highlighted:
            classes.append("step-timeline--highlighted")
        style = self.get_visual_style(*classes)
        key = (entry.status, entry.summary, width, style)
        cached = self._lines.get(entry.index)
        if cached is not None and cached[0] == key:
            return cached[1]
        line = self._render_entry(entry, width, style)
        self._lines[entry.index] = (key, line)
        return line

    def _render_entry(self, entry: TimelineEntry, width: int, style: Style) -> Strip:
        """One line: status icon, step number and the summary cut to the width."""
        icon, look = STATUS_LOOK.get(entry.status, ("·", "$text-muted"))
        room = max(4, width - 1 - len(str(entry.index)) - 3)  # one column left free
        summary = entry.summary if len(entry.summary) <= room else entry.summary[: room - 1] + "…"
        content = Content.from_markup(
            f"[{look}]$icon[/] [b]$n[/] $summary", icon=icon, n=entry.index, summary=summary,
        )
        strips = Content.to_strips(self, content, width, 1, style)
        return strips[0].extend_cell_length(width, style.rich_style).crop(0, width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()

    def on_resize(self) -> None:
        self._lines.clear()
        self._grown()
        self.refresh()

    def allow_focus(self) -> bool:
        """Not while hidden (below 110 columns until `s`): keys would move a highlight nobody
        sees, and enter open a step (a dialog closing gave it the focus)."""
        return self.display

    def on_focus(self) -> None:
        self._refresh_position(self.highlighted)

    def on_blur(self) -> None:
        self._refresh_position(self.highlighted)

    # --- highlight and choice -------------------------------------------------------------------

    def validate_highlighted(self, highlighted: int | None) -> int | None:
        if highlighted is None or not self.steps:
            return None
        return min(max(highlighted, 0), len(self.steps) - 1)

    def watch_highlighted(self, old: int | None, new: int | None) -> None:
        self._refresh_position(old)
        self._refresh_position(new)
        if new is not None:
            self._bring_into_view(new)
        self.post_message(self.StepHighlighted(self.highlighted_step))

    def _bring_into_view(self, position: int) -> None:
        """Scroll just enough for line `position` to be in view."""
        top, height = self.scroll_offset.y, self.scrollable_content_region.height
        if height <= 0:
            return
        if position < top:
            self.scroll_to(y=position, animate=False, immediate=True)
        elif position >= top + height:
            self.scroll_to(y=position - height + 1, animate=False, immediate=True)

    def action_cursor_down(self) -> None:
        if self.steps:
            self.highlighted = 0 if self.highlighted is None else self.highlighted + 1

    def action_cursor_up(self) -> None:
        if self.steps:
            self.highlighted = len(self.steps) - 1 if self.highlighted is None else self.highlighted - 1

    def action_first(self) -> None:
        self.highlighted = 0

    def action_last(self) -> None:
        self.highlighted = len(self.steps) - 1

    def action_page_down(self) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self.highlighted = (self.highlighted or 0) + page

    def action_page_up(self) -> None:
        page = max(1, self.scrollable_content_region.height - 1)
        self.highlighted = (self.highlighted or 0) - page

    def action_select(self) -> None:
        step = self.highlighted_step
        if step is not None:
            self.post_message(self.StepChosen(step))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and offset.y + self.scroll_offset.y < len(self.steps):
            self.highlighted = offset.y + self.scroll_offset.y
            self.action_select()
