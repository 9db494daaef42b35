"""A step record names who made it and what became of it, read the same from any log."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.actions import Bash, Submit
from agent_core.steps import (
    Approve, Observation, Origin, ProposedStep, Reject, StepRecord, StepStatus,
)
from agent_core.history import standing_records
from agent_core.trajectory import read_trajectory, record_from_dict, record_to_dict

RAN = {"output": "ok", "exit_code": 0, "truncated": False, "error": None, "total_chars": None}


def logged(index: int, extra: dict, *, decision: dict | None = None, observation: dict | None = RAN,
           action: dict | None = None) -> str:
    """A StepExecuted/StepRejected line as navtui's logs have always written it (the record's
    origin, user edits and review stage kept in its "extra" object)."""
    record = {
        "index": index,
        "proposed": {"thought": "", "action": action or {"kind": "bash", "command": "ls"}, "raw": "",
                     "dialect": "text", "notice": None},
        "decision": decision or {"kind": "approve"},
        "action": action or {"kind": "bash", "command": "ls"},
        "observation": observation,
        "checkpoint": None,
        "diff": "",
        "extra": extra,
    }
    kind = "StepRejected" if decision and decision["kind"] == "reject" else "StepExecuted"
    return json.dumps({"type": kind, "record": record, "t": 1.0})


def test_an_old_log_loads_with_each_steps_origin_and_status(tmp_path: Path):
    log = tmp_path / "old.jsonl"
    log.write_text("\n".join([
        logged(1, {"source": "user", "user_edits": ["a.txt", "b.txt"]}, observation=None),
        logged(2, {"source": "user"}),
        logged(3, {}, decision={"kind": "reject", "feedback": "no"}, observation=None),
        logged(4, {"git_warnings": ["w"], "submit_review": 0}, action={"kind": "submit"}),
        logged(5, {"turn": {"assistant_raw": True}}),
    ]) + "\n")

    records = standing_records(read_trajectory(log).events)

    assert [(r.origin, r.status) for r in records] == [
        (Origin.USER, StepStatus.USER_EDITS),
        (Origin.USER, StepStatus.EXECUTED),
        (Origin.MODEL, StepStatus.REJECTED),
        (Origin.MODEL, StepStatus.REVIEWED),
        (Origin.MODEL, StepStatus.EXECUTED),
    ]
    assert records[0].user_edits == ["a.txt", "b.txt"] and records[3].review_stage == 0
    # The typed facts leave "extra"; what else it held stays there.
    assert [r.extra for r in records] == [{}, {}, {}, {"git_warnings": ["w"]}, {"turn": {"assistant_raw": True}}]


def record(**fields) -> StepRecord:
    step = ProposedStep(thought="", action=fields.pop("action", Bash("ls")), raw="", dialect="text")
    return StepRecord(index=1, proposed=step, decision=fields.pop("decision", Approve()), **fields)


def test_origin_and_status_of_each_kind_of_step_survive_the_log():
    ran = Observation("ok", exit_code=0)
    kinds = {
        "model step": record(action=Bash("ls"), observation=ran),
        "rejected": record(decision=Reject("no")),
        "reviewed submit": record(action=Submit(), observation=ran, review_stage=0),
        "user command": record(action=Bash("ls"), observation=ran, origin=Origin.USER),
        "user edits": record(origin=Origin.USER, user_edits=["a.txt"]),
    }
    expected = {
        "model step": (Origin.MODEL, StepStatus.EXECUTED),
        "rejected": (Origin.MODEL, StepStatus.REJECTED),
        "reviewed submit": (Origin.MODEL, StepStatus.REVIEWED),
        "user command": (Origin.USER, StepStatus.EXECUTED),
        "user edits": (Origin.USER, StepStatus.USER_EDITS),
    }
    for name, made in kinds.items():
        read = record_from_dict(json.loads(json.dumps(record_to_dict(made))))
        assert (read.origin, read.status) == expected[name], name
        assert read == made, name


def test_the_log_keeps_the_form_older_navtui_reads():
    made = record(action=Bash("ls"), observation=Observation("ok"), origin=Origin.USER, user_edits=["a.txt"],
                  review_stage=1, extra={"git_warnings": ["w"]})
    assert record_to_dict(made)["extra"] == {
        "git_warnings": ["w"], "source": "user", "user_edits": ["a.txt"], "submit_review": 1,
    }
    assert record_to_dict(record(observation=Observation("ok")))["extra"] == {}
