"""`c` on the main screen: copy what has the focus as plain text (see `app.clipboard`).

What is copied follows the focus: the step highlighted in the timeline (its thought, action,
output and diff), the action card's command (exactly what runs), the diff shown, the output
shown, a folded turn of the thought stream. With the focus nowhere in particular, the card's
command when a proposal is on it, else what the lower pane shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from app.clipboard import copy_and_say
from app.step_text import step_text
from widgets.action_card import ActionCard
from widgets.diff_view import DiffView
from widgets.lower_pane import OUTPUT
from widgets.output_log import OutputLog
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import FoldedTurn

if TYPE_CHECKING:
    from app.screens.main import MainScreen


def copy_target(screen: MainScreen) -> tuple[str, str] | None:
    """(what, text) that `c` copies now on the main screen; None when there is nothing to copy."""
    focused = screen.focused
    if isinstance(focused, StepTimeline):
        index = focused.highlighted_step
        records = screen.session.records if screen.session is not None else []
        record = next((r for r in records if r.index == index), None)
        if record is not None:
            return f"step {record.index}", step_text(screen._user_record(record))
    if isinstance(focused, FoldedTurn):
        return f"the thought of {focused.title}", focused.full_text
    card = screen.query_one(ActionCard)
    if isinstance(focused, ActionCard) or (
        not isinstance(focused, DiffView | OutputLog) and card.command_shown
    ):
        return ("the command", card.command_shown) if card.command_shown else None
    if isinstance(focused, DiffView) or (
        not isinstance(focused, OutputLog) and screen._lower.active != OUTPUT
    ):
        diffs = screen.query_one(DiffView)
        return (f"the {diffs.shown} diff", diffs.diff) if diffs.diff else None
    output = screen.query_one(OutputLog)
    if output.record is not None and output.record.observation is not None:
        return f"the output of step {output.record.index}", output.record.observation.output
    return None


class CopyKeys:
    """The main screen's copy action (a mixin of `MainScreen`)."""

    def action_copy(self) -> None:
        screen = cast("MainScreen", self)
        copy_and_say(screen, copy_target(screen))
