"""The keys, in one place: one line each, so they all fit in 80x24; esc closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

INTRO = "The model proposes one action at a time; nothing runs until you decide. Every step can be undone."

# (key, what it does), in the order a session meets them.
KEYS = [
    ("a", "approve: run the proposed action"),
    ("A", "always allow this kind (bash: this command prefix)"),
    ("r", "reject, with feedback the model reads"),
    ("e", "edit the action before it runs"),
    ("u", "undo the last step (files and conversation)"),
    ("w", "rewind to the step highlighted in the timeline"),
    ("m", "message the model, or !command to run yourself"),
    ("t", "auto mode on/off (approve all, within limits)"),
    ("esc", "stop the model (g goes on) or kill the command"),
    ("g", "let the model go on after a stop"),
    ("d", "switch between step diff and session diff"),
    ("s", "show/hide the steps; Enter on one shows it all"),
    ("ctrl+p", "command palette: the same decisions by name"),
    ("q", "quit: the session is saved and can be resumed"),
]


def keys_content() -> Content:
    width = max(len(key) for key, _ in KEYS)
    lines = [Content.assemble((key.rjust(width), "bold $text-accent"), "  ", what) for key, what in KEYS]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="navtui.help.close", tooltip="Close help")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog keys"):
            yield Label("Keys · esc closes this help", classes="dialog-title", id="help-title")
            with VerticalScroll(id="help-keys"):
                yield Static(INTRO, classes="dialog-hint", markup=False)
                yield Static(keys_content(), id="help-table")

    def action_close(self) -> None:
        self.dismiss(None)
