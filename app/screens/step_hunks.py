"""The hunks of a step that ran: mark the ones to put back as they were before the step."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label

from agent_core.hunks import DROP, KEEP
from agent_core.step_hunks import StepHunk
from widgets.hunk_list import HunkList


class StepHunksScreen(ModalScreen[list[StepHunk] | None]):
    """Returns the hunks the user dropped (to put back), or None when cancelled."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("right_square_bracket", "move(1)", "Hunk", id="navtui.hunk_next", tooltip="Next hunk"),
        Binding("left_square_bracket", "move(-1)", "Prev", id="navtui.hunk_prev", tooltip="Previous hunk"),
        Binding("x", "choose(False)", "Revert", id="navtui.hunk_drop",
                tooltip="Put this hunk back as it was before the step"),
        Binding("k", "choose(True)", "Keep", id="navtui.hunk_keep", tooltip="Keep what the step did here"),
        Binding("enter", "revert", "Apply", id="navtui.step_hunks.apply",
                tooltip="Put the hunks marked revert back: a checkpoint of your own, u undoes it"),
        Binding("escape", "cancel", "Cancel", id="navtui.modal.cancel", tooltip="Change nothing"),
    ]

    def __init__(self, step: int, hunks: list[StepHunk]) -> None:
        super().__init__()
        self.step = step
        self.step_hunks = hunks

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help"):
            yield Label(f"Step {self.step}: its changes, hunk by hunk", classes="dialog-title")
            yield Label("x marks a hunk to put back as it was · k keeps it · ] [ move · enter "
                        "applies (a checkpoint of your own: u undoes it) · esc cancels",
                        classes="dialog-hint", markup=False)
            with VerticalScroll():
                yield HunkList(dropped="revert", id="step-hunks")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(HunkList).show_hunks([h.hunk for h in self.step_hunks], [h.path for h in self.step_hunks])

    def action_move(self, delta: int) -> None:
        self.query_one(HunkList).move(delta)

    def action_choose(self, keep: bool) -> None:
        hunk_list = self.query_one(HunkList)
        hunk_list.choose(KEEP if keep else DROP)
        hunk_list.move(1)

    def action_revert(self) -> None:
        choices = self.query_one(HunkList).choices
        self.dismiss([h for h in self.step_hunks if not choices.get(h.hunk.number, KEEP).keep])

    def action_cancel(self) -> None:
        self.dismiss(None)
