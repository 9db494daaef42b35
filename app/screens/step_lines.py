"""A step in one line, for the timeline and the history: its status word and its summary (with
the real root where the model wrote `/testbed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.actions import Action, Submit
from agent_core.steps import EditAction, Origin, Reject, StepRecord, StepStatus
from widgets.action_card import action_summary, user_edits_summary

if TYPE_CHECKING:
    from agent_core.executor.paths import PathMap


def step_status(record: StepRecord) -> str:
    """The timeline's word for a step that is over."""
    if record.origin is Origin.USER:
        return "user"
    if isinstance(record.decision, Reject):
        return "rejected"
    if isinstance(record.action, Submit) and record.status is not StepStatus.REVIEWED:
        return "submitted"  # (a submit answered with a review message did not finish)
    return "executed"


def action_line(action: Action, paths: PathMap | None, width: int = 60) -> str:
    """The action's one line, with the user's paths where `paths` maps the model's."""
    return action_summary(action if paths is None else paths.action_to_user(action), width=width)


def step_line(record: StepRecord, paths: PathMap | None) -> str:
    """The step's one line: its action (as run, if edited) or the user's own edits."""
    if record.status is StepStatus.USER_EDITS:
        return user_edits_summary(record)
    summary = action_line(record.action or record.proposed.action, paths)
    return f"{summary} (edited)" if isinstance(record.decision, EditAction) else summary
