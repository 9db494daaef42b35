"""Each model turn of a logged session with the exact prompt it had and what the user decided.

`model_turns(trajectory)` watches the one fold of the log (`agent_core.history.fold`, the
session's own reducer, as resume and exports read it): turns are added as steps are decided,
dropped by undo. At each `PromptSent` the conversation is snapshotted and the prompt rebuilt from it
(`agent_core.prompt_log.rebuild`); the next model decision (or format error) is paired with it.
Logs from before `PromptSent` get the prompt rebuilt untrimmed at `TurnStarted`.

Only turns still standing after every undo are kept: undoing a step takes its decision back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agent_core import history, prompts
from agent_core.events import (
    Event,
    FormatError,
    PromptSent,
    SessionStarted,
    StepExecuted,
    StepRejected,
    StepUndone,
    TurnStarted,
)
from agent_core.profiles import logged_profile
from agent_core.prompt_log import rebuild
from agent_core.prompt_types import Prompt
from agent_core.session_state import SessionState, logged_turn
from agent_core.learn.hunk_rows import kept_reply
from agent_core.steps import EditAction, KeepHunks, Origin, StepRecord
from agent_core.trajectory import Trajectory, TrajectoryError


class Label(StrEnum):
    """What the user said about a model turn."""

    APPROVED = "approved"
    REJECTED = "rejected"
    EDITED = "edited"
    UNPARSED = "unparsed"  # a format error: nothing to decide


@dataclass
class ModelTurn:
    """One model turn: the prompt it read, its reply, the user's label, and (for an edit) the
    user's action as the model's turn then showed it."""

    session: str
    index: int
    prompt: Prompt
    reply: str
    label: Label
    edit: str | None = None
    sent: PromptSent | None = None
    identity: dict[str, Any] = field(default_factory=dict)
    record: StepRecord | None = None

    @property
    def name(self) -> str:
        """`<session id> step <index>`, for reports."""
        return f"{self.session} step {self.index}"


def _label(record: StepRecord) -> Label:
    if record.observation is None:
        return Label.REJECTED
    return Label.EDITED if isinstance(record.decision, EditAction) else Label.APPROVED


class _Watch:
    """The model turns decided in a session, seen as its log is folded (`history.fold`): each
    with the conversation as it stood then."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.config: dict[str, Any] = {}
        self.state = SessionState(self.dialect)  # the fold's, from its first event on
        # The next decision's prompt: rebuilt from its PromptSent, or (older logs) the turns as
        # they stood at TurnStarted, built when the decision comes.
        self.pending: tuple[Prompt, PromptSent] | list[prompts.Turn] | None = None
        self.identity: dict[str, Any] = {}
        self.done: list[ModelTurn] = []

    @property
    def dialect(self) -> str:
        return history.prompt_dialect(self.config.get("dialect") or self.trajectory.dialect)

    def untrimmed(self, turns: list[prompts.Turn]) -> Prompt:
        """The prompt of a log without `PromptSent`: every turn, the configured profile."""
        return prompts.build_prompt(
            self.dialect,
            self.trajectory.issue,
            turns,
            max_new_tokens=int(self.config.get("max_new_tokens") or 1024),
            repo_path=self.config.get("path_alias") or "/testbed",
            profile=logged_profile(self.config.get("prompt_profile")),
        )

    def before(self, event: Event, state: SessionState) -> None:
        """Close the model turn `event` decides, on the conversation as it stood (the fold's
        `state` takes the event in next)."""
        self.state = state
        if isinstance(event, SessionStarted):
            self.config = dict(event.config)
            self.state.dialect = self.dialect
        elif isinstance(event, TurnStarted):
            self.pending = self.state.turns
        elif isinstance(event, PromptSent):
            if event.identity is not None:
                self.identity = event.identity
            try:
                self.pending = (rebuild(event, self.trajectory.issue, self.state.turns), event)
            except ValueError as error:
                raise TrajectoryError(f"{self.trajectory.path}: {error}") from None
        elif isinstance(event, FormatError):
            self._close(event.index, event.raw, Label.UNPARSED, None)
        elif isinstance(event, (StepExecuted, StepRejected)):
            record = event.record
            if record.origin is Origin.MODEL:
                self._close(record.index, record.proposed.raw, _label(record), record)
        elif isinstance(event, StepUndone):
            self.done = [t for t in self.done if t.index <= event.to_index]

    def _close(self, index: int, raw: str, label: Label, record: StepRecord | None) -> None:
        pending = self.pending if self.pending is not None else self.state.turns
        self.pending = None
        prompt, sent = pending if isinstance(pending, tuple) else (self.untrimmed(pending), None)
        edit = None
        if label is Label.EDITED and record is not None:
            edit = (kept_reply(record) if isinstance(record.decision, KeepHunks)
                    else logged_turn(record, self.dialect).assistant)
        self.done.append(ModelTurn(
            session=self.trajectory.session_id, index=index, prompt=prompt, reply=raw,
            label=label, edit=edit, sent=sent, identity=self.identity, record=record,
        ))


def model_turns(trajectory: Trajectory) -> list[ModelTurn]:
    """Every model turn still standing after the session's undos, in order."""
    watch = _Watch(trajectory)
    history.fold(trajectory.events, watch.dialect, before=watch.before)
    return watch.done
