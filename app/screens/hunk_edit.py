"""Edit one hunk of a proposed edit: the lines it puts in, before the step runs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TextArea

from agent_core.hunks import Hunk
from agent_core.sanitize import visible


class HunkEditScreen(ModalScreen[str | None]):
    """Returns the hunk's new lines as the user wrote them, or None when cancelled."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="navtui.hunk_edit.save", priority=True,
                tooltip="Keep the hunk with these lines"),
        Binding("escape", "cancel", "Cancel", id="navtui.modal.cancel", tooltip="Keep the hunk as it was"),
    ]

    def __init__(self, hunk: Hunk, text: str) -> None:
        super().__init__()
        self.hunk = hunk
        self.text = text

    def compose(self) -> ComposeResult:
        hunk = self.hunk
        with Vertical(classes="dialog"):
            yield Label(f"Edit hunk {hunk.number} ({hunk.where})", classes="dialog-title", markup=False)
            yield Label("The lines it puts in place of these · ctrl+s keeps them · esc cancels",
                        classes="dialog-hint", markup=False)
            was = "".join(hunk.old).rstrip("\n")
            yield Static(visible(was) if was else "(nothing: the hunk only adds lines)",
                         classes="dialog-body", markup=False)
            yield TextArea(self.text, id="hunk-text", soft_wrap=False, show_line_numbers=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)
