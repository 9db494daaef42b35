"""A step as plain text: what was decided on it, its action in full, and the whole step to paste
elsewhere (the step detail's title, `c` on the main screen and on the step detail)."""

from __future__ import annotations

from agent_core.actions import Bash
from agent_core.hunks import review_summary
from agent_core.steps import EditAction, KeepHunks, Origin, Reject, StepRecord, StepStatus
from app.screens.edit import edit_text
from widgets.action_card import action_summary, user_edits_summary


def decision_text(record: StepRecord) -> str:
    if record.status is StepStatus.USER_EDITS:
        return "your own edits, kept as a checkpoint"
    if record.origin is Origin.USER:
        return "your own command"
    if isinstance(record.decision, Reject):
        feedback = record.decision.feedback
        return f"rejected: {feedback}" if feedback else "rejected"
    if isinstance(record.decision, KeepHunks):
        return f"reviewed hunk by hunk, {review_summary(record.decision.hunks)}, then run"
    if isinstance(record.decision, EditAction):
        return "edited by you, then run"
    return "approved"


def action_text(record: StepRecord) -> str:
    """The step's action in full: a bash command as it ran, another action as the model's
    dialect writes it."""
    action = record.action or record.proposed.action
    return action.command if isinstance(action, Bash) else edit_text(action, record.proposed.dialect)


def step_text(record: StepRecord) -> str:
    """One step as text to paste elsewhere: what it was, the thought, action, output and diff."""
    if record.user_edits is not None:
        return f"Step {record.index}: {user_edits_summary(record, width=10_000)}\n\n{record.diff}"
    action = record.action or record.proposed.action
    parts = [f"Step {record.index}: {action_summary(action, width=10_000)} ({decision_text(record)})"]
    if record.proposed.thought.strip():
        parts.append(record.proposed.thought.strip())
    parts.append(action_text(record))
    if record.observation is not None:
        parts.append(record.observation.output.rstrip("\n"))
    if record.diff:
        parts.append(record.diff.rstrip("\n"))
    return "\n\n".join(parts) + "\n"
