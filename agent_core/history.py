"""What still stands of a session: the one fold of its log.

A session log is a list of events; undo takes steps back, a message adds to the conversation,
a resume starts again. Every reader that asks "what stands now" — resume, the sessions list,
exports, learning — folds the events through the reducer the live session itself runs
(`SessionState.apply`), here, and reads the answer off the state: its records (decided steps
still standing, in order), its conversation turns, the user's messages, the pending proposal
and the finish. A reader that needs more than the end state (learning pairs each model turn with
the prompt it read) watches the fold go by with `before`, which sees each event just before the
state takes it in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent_core.events import Event
from agent_core.session_config import AUTO_PROMPT_DIALECT
from agent_core.session_state import SessionState
from agent_core.steps import StepRecord


def prompt_dialect(dialect: str) -> str:
    """The dialect a logged session's turns were written in (`auto` not settled: the default)."""
    return AUTO_PROMPT_DIALECT if dialect == "auto" else dialect


def fold(
    events: Iterable[Event],
    dialect: str = AUTO_PROMPT_DIALECT,
    *,
    turns: bool = True,
    before: Callable[[Event, SessionState], None] | None = None,
) -> SessionState:
    """The state after `events`, in order. `turns=False` leaves the conversation unbuilt (for a
    reader of records and messages only); `before(event, state)` runs before each event."""
    state = SessionState(prompt_dialect(dialect), keep_turns=turns)
    for event in events:
        if before is not None:
            before(event, state)
        state.apply(event)
    return state


def standing_records(events: Iterable[Event]) -> list[StepRecord]:
    """Executed and rejected step records still standing after every undo, in order."""
    return fold(events, turns=False).records


def standing_messages(events: Iterable[Event]) -> list[tuple[int, str]]:
    """(step it follows, text) of each message the user wrote to the model and did not undo."""
    return [(entry.step, entry.turn.observation) for entry in fold(events, turns=False).messages]
