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
NARROW = " The ids: a taller terminal shows them, or docs/keys.md."


def keys_content(rows: list[KeyRow]) -> Content:
    """One line a key: its keys, its binding id (what `[keymap]` remaps) and what it does."""
    width = max((len(row.keys) for row in rows), default=1)
    id_width = max((len(row.binding_id) for row in rows), default=0)
    lines = [
        Content.assemble((row.keys.rjust(width), "bold $text-accent"), "  ",
                         (row.binding_id.ljust(id_width), "$text-muted"), "  ", row.what)
        for row in rows
    ]
    return Content("\n").join(lines)


def two_column_keys(rows: list[KeyRow], width: int) -> Content:
    """The keys in two columns of `width` cells in all, each key with its short name (for a
    terminal too short for one line a key; the ids are in the one-column table)."""
    half = (len(rows) + 1) // 2
    key_width = max((len(row.keys) for row in rows), default=1)
    cell = max(key_width + 4, (width - 2) // 2)

    def one(row: KeyRow) -> Content:
        name = row.description or row.what
        text = Content.assemble((row.keys.rjust(key_width), "bold $text-accent"), "  ", name)
        return text.truncate(cell, ellipsis=True, pad=True)

    lines = [one(left) + Content("  ") + (one(rows[half + i]) if half + i < len(rows) else Content())
             for i, left in enumerate(rows[:half])]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="navtui.help.close", tooltip="Close help")]

    def __init__(self, rows: list[KeyRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        width, height = self.app.size
        # (title, borders and padding take 6 rows; below that many keys, two columns fit them)
        narrow = len(self.rows) > height - 6
        table = two_column_keys(self.rows, width - 6) if narrow else keys_content(self.rows)
        with Vertical(classes="dialog keys"):
            yield Label("Keys · esc closes this help", classes="dialog-title", id="help-title")
            with VerticalScroll(id="help-keys"):  # (the table first: at 80x24 it fills the screen)
                yield Static(table, id="help-table")
                yield Static(INTRO + NARROW * narrow, classes="dialog-hint", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
