"""What a session knows, rebuilt from its events: one reducer for live and resumed sessions.

`SessionState.apply(event)` is the only place a session's records, conversation, pending
proposal, format-error count and finish change. The live `Session` applies each event it emits
before its listeners see it; every reader of a log folds the logged events through the same
`apply` (`agent_core.history.fold`), so a resumed session starts from exactly the state the live
one had, and exports and learning see what it saw. The reducer does no I/O: whatever it needs is in the events (each decided step carries its
conversation turn, see `agent_core.stored_turns`; format errors and user messages carry theirs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core import prompts
from agent_core.events import (
    Event,
    FormatError,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    UserMessage,
)
from agent_core.formats import ParseError
from agent_core.steps import Origin, StepRecord, StepStatus
from agent_core.stored_turns import stored_turn


@dataclass
class Entry:
    """One turn of the conversation, tagged with the step it belongs to (undo drops later ones).

    An empty `turn.assistant` is the user speaking (a message or a command they ran).
    """

    step: int
    turn: prompts.Turn


@dataclass
class SessionState:
    """`dialect`: the shape observations are written in, used only to rebuild turns that logs
    from before the session stored them lack."""

    dialect: str
    keep_turns: bool = True  # False: records, messages and finish only (the conversation unbuilt)
    records: list[StepRecord] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    messages: list[Entry] = field(default_factory=list)  # the user's, as they wrote them
    pending: StepProposed | None = None
    finished: SessionFinished | None = None
    format_errors: int = 0  # consecutive unparseable replies
    model_turns_used: int = 0  # model outputs consumed (a replay script skips past them)

    @property
    def turns(self) -> list[prompts.Turn]:
        return [entry.turn for entry in self.entries]

    def next_index(self) -> int:
        return self.records[-1].index + 1 if self.records else 1

    def apply(self, event: Event) -> None:
        """Move to the state after `event`; events that change nothing here are ignored."""
        if isinstance(event, SessionStarted):
            # A (re)start: a proposal that was waiting is asked for again; the session runs on.
            self.pending = self.finished = None
        elif isinstance(event, StepProposed):
            self.pending = event
            self.format_errors = 0
        elif isinstance(event, FormatError):
            if self.keep_turns:
                observation = event.observation or prompts.format_parse_error(
                    self.dialect, ParseError(event.message, self.dialect)
                )
                self.entries.append(Entry(event.index, prompts.Turn(event.raw, observation)))
            self.format_errors = event.consecutive
            self.model_turns_used += 1
        elif isinstance(event, (StepRejected, StepExecuted)):
            self._decided(event.record)
        elif isinstance(event, UserMessage):
            self.finished = None  # a message after a finish (a submit) goes on with the session
            step = self.records[-1].index if self.records else 0
            self.messages.append(Entry(step, prompts.Turn("", event.text)))
            if self.keep_turns:
                note = event.observation or prompts.format_user_message(self.dialect, event.text)
                self.entries.append(Entry(step, prompts.Turn("", note)))
        elif isinstance(event, StepUndone):
            self.drop_after(event.to_index)
            self.pending = None
            self.format_errors = 0
        elif isinstance(event, SessionFinished):
            self.pending = None
            self.finished = event

    def _decided(self, record: StepRecord) -> None:
        if self.keep_turns and record.status is not StepStatus.USER_EDITS:  # (no turn: edits)
            self.entries.append(Entry(record.index, logged_turn(record, self.dialect)))
        self.records.append(record)
        self.pending = None
        if record.origin is Origin.MODEL:
            self.format_errors = 0
            self.model_turns_used += 1

    def drop_after(self, index: int) -> None:
        """Forget every step after `index` and the turns that belong to them."""
        self.records = [r for r in self.records if r.index <= index]
        self.entries = [e for e in self.entries if e.step <= index]
        self.messages = [e for e in self.messages if e.step <= index]


def logged_turn(record: StepRecord, dialect: str) -> prompts.Turn:
    """The turn a decided step left in the conversation: the one the session stored with it.

    Logs written before the session stored its turns get a plain approximation (an edited
    step's note to the model is not rebuilt).
    """
    stored = stored_turn(record)
    if stored is not None:
        return stored
    if record.observation is None:
        feedback = getattr(record.decision, "feedback", "")
        return prompts.Turn(record.proposed.raw, prompts.format_rejection(dialect, feedback))
    assert record.action is not None
    if record.origin is Origin.USER:
        command = getattr(record.action, "command", "")
        return prompts.Turn("", prompts.format_user_command(dialect, command, record.observation))
    text = prompts.format_observation(
        dialect, record.action, record.observation, notice=record.proposed.notice
    )
    return prompts.Turn(record.proposed.raw, text)
