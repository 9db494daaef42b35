"""Confirm quitting; say what stays in the working tree and how to get back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class QuitScreen(ModalScreen[bool]):
    """Returns True to quit (or, with another title, to go ahead with what it asks about)."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("escape,n", "stay", "Stay", id="navtui.quit.stay", tooltip="Back to the session"),
        Binding("y,q", "quit_now", "Quit", id="navtui.quit.confirm", tooltip="Quit; the session stays resumable"),
    ]

    def __init__(
        self, explanation: str, *, title: str = "Quit navtui?", go: str = "Quit", stay: str = "Stay"
    ) -> None:
        super().__init__()
        self.explanation = explanation
        self.labels = (title, go, stay)

    def compose(self) -> ComposeResult:
        title, go, stay = self.labels
        with Vertical(classes="dialog"):
            yield Label(title, classes="dialog-title")
            yield Static(self.explanation, classes="dialog-body", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{go} (y)", variant="warning", id="quit")
                yield Button(f"{stay} (n)", variant="primary", id="stay")

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "quit")

    def action_stay(self) -> None:
        self.dismiss(False)

    def action_quit_now(self) -> None:
        self.dismiss(True)
