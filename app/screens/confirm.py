"""Ask before doing something that cannot be taken back from where the user stands."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static


class ConfirmScreen(ModalScreen[bool]):
    """Returns True when the user confirms (`y` or the button), False on `n` / esc."""

    CSS_PATH = "modal.tcss"
    AUTO_FOCUS = "#no"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="navtui.confirm.yes", tooltip="Do it"),
        Binding("escape,n", "answer(False)", "No", id="navtui.confirm.no", tooltip="Leave things as they are"),
    ]

    def __init__(self, title: str, explanation: str, *, confirm: str = "Yes", cancel: str = "Cancel") -> None:
        super().__init__()
        self.title_text = title
        self.explanation = explanation
        self.confirm = confirm
        self.cancel = cancel

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Static(self.explanation, id="explanation", classes="dialog-body", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm} (y)", variant="warning", id="yes")
                yield Button(f"{self.cancel} (n)", variant="primary", id="no")

    def explain(self, explanation: str) -> None:
        """Say something newer while the question is open (what it is about changed)."""
        if explanation != self.explanation:
            self.explanation = explanation
            if self.is_mounted:
                self.query_one("#explanation", Static).update(explanation)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class OverwriteScreen(ConfirmScreen):
    """Ask before `verb` ("Undo", "Discard") overwrites files changed outside the session
    (`paths`, since checkpoint `since` when known); they are kept in a before-undo ref first."""

    SHOWN_PATHS = 15

    def __init__(self, verb: str, paths: Sequence[str], *, since: int | None = None) -> None:
        files = "\n".join(f"  {path}" for path in paths[: self.SHOWN_PATHS])
        more = len(paths) - self.SHOWN_PATHS
        when = "" if since is None else f" since step {since}"
        super().__init__(
            f"{verb} over your changes?",
            f"Changed outside the session{when}:\n{files}"
            + (f"\n  … and {more} more" if more > 0 else "")
            + f"\n\n{verb} anyway overwrites them (they are saved in a before-undo ref first).",
            confirm=f"{verb} anyway",
        )
