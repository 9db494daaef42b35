"""Hunk-level training rows: an edit the user reviewed hunk by hunk (`KeepHunks`) is a preference
pair of the model's own turn, the full proposal (rejected), and the same turn proposing only the
kept hunks, as the user changed them (chosen).

The session showed the model its own turn with a note after the tool's answer, so the log keeps
no turn holding only the kept hunks; `kept_reply` writes it: the rebuilt action in the proposal's
dialect, after the model's own thought. `learn.history` gives it as the turn's edit, so `sft`,
`dpo` and `kto` rows (exports and `navtui finetune`) are built from it as from any edit.
"""

from __future__ import annotations

from agent_core import formats
from agent_core.steps import KeepHunks, StepRecord


def kept_reply(record: StepRecord) -> str | None:
    """The model's turn as it would read had it proposed only the hunks the user kept; None
    when the record is no hunk review or its dialect cannot write the rebuilt action."""
    decision = record.decision
    if not isinstance(decision, KeepHunks):
        return None
    try:
        return formats.render(decision.action, record.proposed.dialect, record.proposed.thought)
    except ValueError:
        return None

