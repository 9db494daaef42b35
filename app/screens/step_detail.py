"""One step in full: thought, action, output, diff; rewind to it from here."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown, Static

from agent_core.steps import StepRecord, StepStatus
from agent_core.sanitize import visible
from app.clipboard import copy_and_say
from app.step_text import decision_text, step_text
from widgets.action_card import action_summary, user_edits_summary
from widgets.diff_view import highlight_diff
from widgets.output_log import observation_lines

MAX_OUTPUT_LINES = 400


class StepDetailScreen(ModalScreen[str | None]):
    """Returns "rewind" when the user asks to go back to this step, else None."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="navtui.detail.close", tooltip="Back to the session"),
        Binding("c", "copy", "Copy", id="navtui.detail.copy", tooltip="Copy this step as plain text"),
        Binding("w", "rewind", "Rewind here", id="navtui.detail.rewind",
                tooltip="Restore files and conversation to right after this step"),
    ]

    def __init__(self, record: StepRecord, can_rewind: bool) -> None:
        super().__init__()
        self.record = record
        self.can_rewind = can_rewind

    def compose(self) -> ComposeResult:
        record = self.record
        action = record.action or record.proposed.action
        with VerticalScroll(classes="dialog help"):
            yield Label(visible(f"Step {record.index} · {decision_text(record)}"), classes="dialog-title",
                        markup=False)
            if record.proposed.thought.strip():
                yield Label("Thought", classes="detail-section")
                yield Markdown(visible(record.proposed.thought))
            yield Label("Action", classes="detail-section")
            summary = (user_edits_summary(record, width=200) if record.status is StepStatus.USER_EDITS
                       else action_summary(action, width=200))
            yield Static(summary, markup=False)
            if record.observation is not None:
                lines = observation_lines(record.observation)
                if len(lines) > MAX_OUTPUT_LINES:
                    lines = lines[:MAX_OUTPUT_LINES] + [f"… {len(lines) - MAX_OUTPUT_LINES} more lines"]
                yield Label("Output", classes="detail-section")
                yield Static("\n".join(lines), markup=False)
            if record.diff:
                yield Label("Diff", classes="detail-section")
                yield Static(highlight_diff(record.diff))
            rewind = "w rewinds to right after this step · " if self.can_rewind else ""
            yield Label(f"{rewind}c copies it · esc closes", classes="dialog-hint")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "rewind":
            return self.can_rewind
        return True

    def action_rewind(self) -> None:
        self.dismiss("rewind")

    def action_copy(self) -> None:
        copy_and_say(self, (f"step {self.record.index}", step_text(self.record)))

    def action_close(self) -> None:
        self.dismiss(None)
