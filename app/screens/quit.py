"""Confirm quitting; say what stays in the working tree and how to get back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class QuitScreen(ModalScreen[bool]):
    """Returns True to quit (other questions: `app.screens.confirm.ConfirmScreen`)."""

    CSS_PATH = "modal.tcss"
    AUTO_FOCUS = "#stay"
    BINDINGS = [
        Binding("escape,n", "stay", "Stay", id="navtui.quit.stay", tooltip="Back to the session"),
        Binding("y,q", "quit_now", "Quit", id="navtui.quit.confirm", tooltip="Quit; the session stays resumable"),
    ]

    def __init__(self, explanation: str) -> None:
        super().__init__()
        self.explanation = explanation

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Quit navtui?", classes="dialog-title")
            yield Static(self.explanation, classes="dialog-body", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Quit (y)", variant="warning", id="quit")
                yield Button("Stay (n)", variant="primary", id="stay")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "quit")

    def action_stay(self) -> None:
        self.dismiss(False)

    def action_quit_now(self) -> None:
        self.dismiss(True)
