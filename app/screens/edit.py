"""Edit the proposed action before it runs: inline, or in `$EDITOR`."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from agent_core.actions import Action
from agent_core.formats import ParseError


def edit_text(action: Action, dialect: str) -> str:
    """`action` as the model of `dialect` would write it, laid out for a person to edit."""
    from agent_core.formats import get_dialect

    return get_dialect(dialect).edit_text(action)


def edit_in_external_editor(text: str, suffix: str = ".txt") -> str:
    """Open `text` in `$VISUAL`/`$EDITOR` (default `vi`) and return what the user saved."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False, encoding="utf-8") as handle:
        handle.write(text)
        path = Path(handle.name)
    try:
        subprocess.run([*shlex.split(editor), str(path)], check=False)
        return path.read_text(encoding="utf-8")
    finally:
        path.unlink(missing_ok=True)


class EditScreen(ModalScreen[Action | None]):
    """Returns the parsed action, or None when cancelled. Parse errors are shown, not raised."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save & run", id="navtui.edit.save", priority=True,
                tooltip="Parse the edited action and run it"),
        # Priority: the text area's own ctrl+e (end of line) would take the key first.
        Binding("ctrl+e", "external", "$EDITOR", id="navtui.edit.external", priority=True,
                tooltip="Edit in your $EDITOR"),
        Binding("escape", "cancel", "Cancel", id="navtui.modal.cancel", tooltip="Keep the proposal as it is"),
    ]

    def __init__(self, text: str, parse: Callable[[str], Action], dialect: str) -> None:
        super().__init__()
        self.text = text
        self.parse = parse
        self.dialect = dialect

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Edit the action ({self.dialect} dialect)", classes="dialog-title")
            yield Label("ctrl+s saves and runs it · ctrl+e opens $EDITOR · esc cancels",
                        classes="dialog-hint", markup=False)
            yield TextArea(self.text, id="action-text", soft_wrap=False, show_line_numbers=True)
            yield Static("", id="edit-error", classes="dialog-error", markup=False)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        try:
            action = self.parse(text)
        except ParseError as error:
            self.query_one("#edit-error", Static).update(f"Could not parse this action:\n{error}")
            return
        self.dismiss(action)

    def action_external(self) -> None:
        area = self.query_one(TextArea)
        try:
            with self.app.suspend():
                edited = edit_in_external_editor(area.text)
        except (SuspendNotSupported, OSError) as error:
            why = "this terminal cannot hand over to another program" if isinstance(
                error, SuspendNotSupported) else f"cannot start the editor: {error.strerror or error}"
            self.query_one("#edit-error", Static).update(f"$EDITOR: {why}; edit the action here")
            return
        area.load_text(edited)

    def action_cancel(self) -> None:
        self.dismiss(None)
