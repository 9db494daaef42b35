"""The JSON form of events and step records, as the session log and `--json` write them.

`event_to_dict` / `event_from_dict` are inverses for every event; older logs read through the
same functions (a finish reason this navtui does not know reads as `error`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from agent_core.actions import Action, action_from_dict, action_to_dict
from agent_core.events import (
    Event,
    FormatError,
    Notice,
    PromptSent,
    SessionError,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    TokenStreamed,
    TurnStarted,
    UsageReported,
    UserMessage,
    Waiting,
)
from agent_core.finish import FinishReason
from agent_core.prompt_types import Usage
from agent_core.steps import (
    Approve,
    Checkpoint,
    Decision,
    EditAction,
    HunkOutcome,
    KeepHunks,
    Observation,
    Origin,
    ProposedStep,
    Quit,
    Reject,
    StepRecord,
    Verdict,
)


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    if isinstance(decision, Approve):
        return {"kind": "approve", "decided_by": decision.decided_by}
    if isinstance(decision, Reject):
        return {"kind": "reject", "feedback": decision.feedback, "decided_by": decision.decided_by}
    if isinstance(decision, KeepHunks):
        return {"kind": "hunks", "action": action_to_dict(decision.action),
                "hunks": [asdict(outcome) for outcome in decision.hunks]}
    if isinstance(decision, EditAction):
        return {"kind": "edit", "action": action_to_dict(decision.action)}
    if isinstance(decision, Quit):
        return {"kind": "quit"}
    raise TypeError(f"not a decision: {decision!r}")


def decision_from_dict(data: dict[str, Any]) -> Decision:
    kind = data["kind"]
    if kind == "approve":
        return Approve(data.get("decided_by", ""))
    if kind == "reject":
        return Reject(data.get("feedback", ""), data.get("decided_by", ""))
    if kind == "edit":
        return EditAction(action_from_dict(data["action"]))
    if kind == "hunks":
        return KeepHunks(action_from_dict(data["action"]), [_outcome(h) for h in data["hunks"]])
    if kind == "quit":
        return Quit()
    raise ValueError(f"unknown decision kind {kind!r}")


def _outcome(data: dict[str, Any]) -> HunkOutcome:
    """A logged hunk outcome, its fields checked (a log is data the model may have written)."""
    text = data.get("text")
    fields = (data["header"], data["where"], data["old"], data["new"])
    if not isinstance(data["number"], int) or not all(isinstance(f, str) for f in fields) or not (
            text is None or isinstance(text, str)):
        raise ValueError(f"a logged hunk outcome is malformed: {sorted(data)}")
    return HunkOutcome(data["number"], Verdict(data["verdict"]), *fields, text)


def _step_to_dict(step: ProposedStep) -> dict[str, Any]:
    return {
        "thought": step.thought,
        "action": action_to_dict(step.action),
        "raw": step.raw,
        "dialect": step.dialect,
        "notice": step.notice,
    }


def _step_from_dict(data: dict[str, Any]) -> ProposedStep:
    return ProposedStep(
        thought=data["thought"],
        action=action_from_dict(data["action"]),
        raw=data["raw"],
        dialect=data["dialect"],
        notice=data.get("notice"),
    )


def _optional_action(data: dict[str, Any] | None) -> Action | None:
    return None if data is None else action_from_dict(data)


# How a record's origin, user edits and review stage sit in the log: keys of its "extra" object,
# as every log so far has written them.
SOURCE_KEY = "source"  # "user" for a step the user made; absent for the model's proposals
USER_EDITS_KEY = "user_edits"
REVIEW_KEY = "submit_review"


def record_to_dict(record: StepRecord) -> dict[str, Any]:
    return {
        "index": record.index,
        "proposed": _step_to_dict(record.proposed),
        "decision": decision_to_dict(record.decision),
        "action": None if record.action is None else action_to_dict(record.action),
        "observation": None if record.observation is None else asdict(record.observation),
        "checkpoint": None if record.checkpoint is None else asdict(record.checkpoint),
        "diff": record.diff,
        "extra": _extra_to_dict(record),
    }


def record_from_dict(data: dict[str, Any]) -> StepRecord:
    observation = data.get("observation")
    checkpoint = data.get("checkpoint")
    return StepRecord(
        index=data["index"],
        proposed=_step_from_dict(data["proposed"]),
        decision=decision_from_dict(data["decision"]),
        action=_optional_action(data.get("action")),
        observation=None if observation is None else Observation(**observation),
        checkpoint=None if checkpoint is None else Checkpoint(**checkpoint),
        diff=data.get("diff", ""),
        **_typed_from_extra(data.get("extra") or {}),
    )


def _extra_to_dict(record: StepRecord) -> dict[str, Any]:
    extra = dict(record.extra)
    if record.origin is Origin.USER:
        extra[SOURCE_KEY] = str(Origin.USER)
    if record.user_edits is not None:
        extra[USER_EDITS_KEY] = record.user_edits
    if record.review_stage is not None:
        extra[REVIEW_KEY] = record.review_stage
    return extra


def _typed_from_extra(extra: dict[str, Any]) -> dict[str, Any]:
    """`StepRecord` fields from a logged "extra" object: the typed ones taken out of it."""
    rest = dict(extra)
    source = rest.pop(SOURCE_KEY, None)
    user_edits = rest.pop(USER_EDITS_KEY, None)
    review_stage = rest.pop(REVIEW_KEY, None)
    return {
        "extra": rest,
        "origin": Origin.USER if source == Origin.USER else Origin.MODEL,
        "user_edits": None if user_edits is None else [str(p) for p in user_edits],
        "review_stage": None if review_stage is None else int(review_stage),
    }


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON form of an event: `{"type": <class name>, **fields}` (nested types encoded)."""
    name = type(event).__name__
    if isinstance(event, StepProposed):
        fields_ = {
            "index": event.index,
            "step": _step_to_dict(event.step),
            "command_shown": event.command_shown,
            "preview_diff": event.preview_diff,
        }
    elif isinstance(event, (StepExecuted, StepRejected)):
        fields_ = {"record": record_to_dict(event.record)}
    else:
        fields_ = asdict(event)
    return {"type": name, **fields_}


_PLAIN_EVENTS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        SessionStarted,
        TurnStarted,
        TokenStreamed,
        FormatError,
        StepUndone,
        Notice,
        Waiting,
        UserMessage,
        SessionFinished,
        SessionError,
        PromptSent,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of `event_to_dict`; raises ValueError for an unknown type."""
    name = data.get("type")
    body = {k: v for k, v in data.items() if k not in ("type", "t")}
    if name == "StepProposed":
        return StepProposed(
            index=body["index"],
            step=_step_from_dict(body["step"]),
            command_shown=body["command_shown"],
            preview_diff=body.get("preview_diff"),
        )
    if name == "StepExecuted":
        return StepExecuted(record_from_dict(body["record"]))
    if name == "StepRejected":
        return StepRejected(record_from_dict(body["record"]))
    if name == "UsageReported":
        return UsageReported(
            index=body["index"],
            usage=Usage(**body["usage"]),
            context_tokens=body["context_tokens"],
            context_limit=body["context_limit"],
            context_estimated=body.get("context_estimated", False),
        )
    cls = _PLAIN_EVENTS.get(name)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event type {name!r}")
    if cls is SessionFinished:
        body["reason"] = _finish_reason(body.get("reason"))
    return cls(**body)


def _finish_reason(value: object) -> FinishReason:
    """A logged finish reason; one this navtui does not know reads as an error."""
    try:
        return FinishReason(str(value))
    except ValueError:
        return FinishReason.ERROR
