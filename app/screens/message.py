"""Type your own shell command, or a message for the model."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Switch


@dataclass
class UserInput:
    """`kind` is `command` (run in the repo, checkpointed) or `message` (the model reads it)."""

    kind: str
    text: str


HINT = "A message the model reads next turn, or !cmd to run a command yourself."


class MessageScreen(ModalScreen[UserInput | None]):
    """A leading `!` or the switch makes the text a shell command."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="navtui.modal.cancel", tooltip="Close without sending"),
        Binding("ctrl+o", "toggle_kind", "Command/message", id="navtui.message.kind",
                tooltip="Switch between a shell command and a message to the model"),
    ]

    def __init__(self, *, command: bool = False, hint: str = HINT) -> None:
        super().__init__()
        self.command = command
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Your turn", classes="dialog-title")
            yield Label(self.hint, classes="dialog-hint", markup=False)
            yield Input(placeholder="message, or !pytest -q", id="user-text")
            with Horizontal(classes="dialog-row"):
                yield Switch(value=self.command, id="as-command")
                yield Label("run as a shell command (ctrl+o)", classes="switch-label")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.dismiss(None)
            return
        as_command = self.query_one("#as-command", Switch).value
        if text.startswith("!"):
            as_command, text = True, text[1:].strip()
        self.dismiss(UserInput("command" if as_command else "message", text))

    def action_toggle_kind(self) -> None:
        switch = self.query_one("#as-command", Switch)
        switch.value = not switch.value

    def action_cancel(self) -> None:
        self.dismiss(None)
