"""Reject the proposal, optionally telling the model why."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class RejectScreen(ModalScreen[str | None]):
    """Returns the feedback ("" for a plain reject) or None when cancelled."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="navtui.modal.cancel", tooltip="Keep the proposal")]

    def __init__(self, summary: str) -> None:
        super().__init__()
        self.summary = summary

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Reject: {self.summary}", classes="dialog-title", markup=False)
            yield Label("Tell the model why (Enter sends; empty = plain reject; Esc cancels).",
                        classes="dialog-hint")
            yield Input(placeholder="e.g. read the failing test first", id="feedback")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
