"""Every step of the session with its status; choosing one asks to show it in full."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_core.sanitize import visible
from widgets._css import css_beside

# Status -> (icon, style) for each timeline entry.
STATUS_LOOK: dict[str, tuple[str, str]] = {
    "pending": ("?", "$text-accent"),
    "running": ("…", "$text-warning"),
    "executed": ("✓", "$text-success"),
    "rejected": ("✗", "$text-error"),
    "user": ("$", "$text-secondary"),
    "submitted": ("★", "$text-success"),
}


@dataclass
class TimelineEntry:
    index: int
    status: str
    summary: str


class StepTimeline(OptionList):
    """Entries keyed by step index; `set_step` adds or updates one."""

    DEFAULT_CSS = css_beside(__file__)

    class StepChosen(Message):
        """The user chose step `index` (Enter or click)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[int, TimelineEntry] = {}
        self.border_title = "Steps"

    def set_step(self, index: int, status: str, summary: str | None = None) -> None:
        """Add step `index` or change its status (and summary when given).

        Only that entry's line changes; a step added out of order rebuilds the list.
        """
        summary = None if summary is None else visible(summary)
        entry = self.entries.get(index)
        if entry is None:
            entry = self.entries[index] = TimelineEntry(index, status, summary or "")
            if index < max(self.entries):
                self._rebuild()
                return
            self.add_option(Option(self._prompt(entry), id=f"step-{index}"))
            if self.highlighted is None:
                self.highlighted = self.option_count - 1
            return
        if entry.status == status and (summary is None or summary == entry.summary):
            return
        entry.status = status
        if summary is not None:
            entry.summary = summary
        self._replace_line(self.get_option_index(f"step-{index}"), self._prompt(entry))

    def drop_after(self, to_index: int) -> None:
        """Forget the steps after `to_index` (they were undone; new ones may reuse the numbers)."""
        for index in sorted((i for i in self.entries if i > to_index), reverse=True):
            self.drop(index)

    def drop(self, index: int) -> None:
        """Forget a step that never happened (e.g. a proposal dropped by an undo)."""
        if self.entries.pop(index, None) is not None:
            self.remove_option(f"step-{index}")

    @property
    def highlighted_step(self) -> int | None:
        """Index of the highlighted step, if any."""
        if self.highlighted is None or self.highlighted >= self.option_count:
            return None
        option_id = self.get_option_at_index(self.highlighted).id
        return int(option_id.removeprefix("step-")) if option_id else None

    def _prompt(self, entry: TimelineEntry) -> Content:
        """One line: status icon, step number and the summary cut to the list's width."""
        width = max(12, (self.scrollable_content_region.width or 26) - 1)
        icon, style = STATUS_LOOK.get(entry.status, ("·", "$text-muted"))
        room = max(4, width - len(str(entry.index)) - 3)
        summary = entry.summary if len(entry.summary) <= room else entry.summary[: room - 1] + "…"
        return Content.from_markup(
            f"[{style}]$icon[/] [b]$n[/] $summary", icon=icon, n=entry.index, summary=summary,
        )

    def _replace_line(self, position: int, prompt: Content) -> None:
        """Show `prompt` for the option at `position`, re-rendering only its line.

        `OptionList.replace_option_prompt` drops every option's cached render and line layout
        and repaints the whole list, so each status change would cost as much as drawing the
        list anew. Every prompt here is one line (cut to the width), so the layout stays valid:
        only this option's cached render is dropped and its line repainted (Textual 8's
        `Option._set_prompt` and `OptionList._option_render_cache`).
        """
        option = self.get_option_at_index(position)
        option._set_prompt(prompt)
        cache = self._option_render_cache
        for key in [key for key in cache.keys() if key[0] is option]:
            cache.discard(key)
        self.refresh_line(position)

    def _rebuild(self) -> None:
        keep = self.highlighted_step
        self.set_options(
            Option(self._prompt(entry), id=f"step-{entry.index}")
            for entry in sorted(self.entries.values(), key=lambda e: e.index)
        )
        if keep is not None and keep in self.entries:
            self.highlighted = self.get_option_index(f"step-{keep}")
        elif self.option_count:
            self.highlighted = self.option_count - 1

    def on_resize(self) -> None:
        self._rebuild()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id:
            self.post_message(self.StepChosen(int(event.option_id.removeprefix("step-"))))
