"""A step record names who made it and what became of it, read the same from any log."""

from __future__ import annotations

from agent_core.actions import Bash, Submit
from agent_core.steps import (
    Approve, Observation, Origin, ProposedStep, Reject, StepRecord, StepStatus,
)
from agent_core.trajectory import record_from_dict, record_to_dict


def record(**fields) -> StepRecord:
    step = ProposedStep(thought="", action=fields.pop("action", Bash("ls")), raw="", dialect="text")
    return StepRecord(index=1, proposed=step, decision=fields.pop("decision", Approve()), **fields)


def test_origin_and_status_of_each_kind_of_step_survive_the_log():
    ran = Observation("ok", exit_code=0)
    kinds = {
        "model step": record(action=Bash("ls"), observation=ran),
        "rejected": record(decision=Reject("no")),
        "reviewed submit": record(action=Submit(), observation=ran, extra={"submit_review": 0}),
        "user command": record(action=Bash("ls"), observation=ran, extra={"source": "user"}),
        "user edits": record(extra={"source": "user", "user_edits": ["a.txt"]}),
    }
    expected = {
        "model step": (Origin.MODEL, StepStatus.EXECUTED),
        "rejected": (Origin.MODEL, StepStatus.REJECTED),
        "reviewed submit": (Origin.MODEL, StepStatus.REVIEWED),
        "user command": (Origin.USER, StepStatus.EXECUTED),
        "user edits": (Origin.USER, StepStatus.USER_EDITS),
    }
    for name, made in kinds.items():
        read = record_from_dict(record_to_dict(made))
        assert (read.origin, read.status) == expected[name], name
