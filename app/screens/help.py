"""The keys, in one place, as they are now: built from the bindings and the live keymap (`[keymap]`
in the config file), one line each with its binding id; esc closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from app.keys import KeyRow

INTRO = "Nothing runs until you decide. Remap keys by id in the config's [keymap]."


def keys_content(rows: list[KeyRow]) -> Content:
    width = max((len(row.keys) for row in rows), default=1)
    id_width = max((len(row.binding_id) for row in rows), default=0)
    lines = [
        Content.assemble((row.keys.rjust(width), "bold $text-accent"), "  ",
                         (row.binding_id.ljust(id_width), "$text-muted"), "  ", row.what)
        for row in rows
    ]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="navtui.help.close", tooltip="Close help")]

    def __init__(self, rows: list[KeyRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog keys"):
            yield Label("Keys · esc closes this help", classes="dialog-title", id="help-title")
            with VerticalScroll(id="help-keys"):  # (the table first: at 80x24 it fills the screen)
                yield Static(keys_content(self.rows), id="help-table")
                yield Static(INTRO, classes="dialog-hint", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
