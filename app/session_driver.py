"""Runs a Session in one worker thread for the TUI: commands go in, events come out in order.

The session's own thread is the only one that calls `propose`, `decide`, `undo`, ...; the UI
thread only enqueues commands and, to stop a generation, calls `Session.cancel()`.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_core.events import Event, SessionError, StepProposed, TokenStreamed
from agent_core.git.errors import UnsafeRestore
from agent_core.policy import AutoPolicy, RulesPolicy
from agent_core.steps import Approve, Decision, Reject

if TYPE_CHECKING:
    from agent_core.session import Session


# The feedback the model reads when the user ran their own command instead of its proposal.
INSTEAD_OF_PROPOSAL = "The user ran their own command instead of this one."


class _Tokens:
    """Back-to-back token chunks of one turn, joined only when the UI takes them."""

    def __init__(self, event: TokenStreamed) -> None:
        self.index = event.index
        self.parts = [event.text]

    def event(self) -> TokenStreamed:
        return TokenStreamed(index=self.index, text="".join(self.parts))


class EventInbox:
    """A thread-safe, ordered queue of session events that merges back-to-back token chunks.

    `wake` is called (from the producing thread) only when the inbox goes from empty to
    non-empty, so a flood of tokens costs the UI one message per drain, not one per token; a
    chunk costs the producer one list append, however far behind the UI is.
    """

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._events: deque[Event | _Tokens] = deque()
        self._lock = threading.Lock()
        self._woken = False

    def put(self, event: Event) -> None:
        with self._lock:
            last = self._events[-1] if self._events else None
            if isinstance(event, TokenStreamed):
                if isinstance(last, _Tokens) and last.index == event.index:
                    last.parts.append(event.text)
                else:
                    self._events.append(_Tokens(event))
            else:
                self._events.append(event)
            wake, self._woken = not self._woken, True
        if wake:
            self._wake()

    def drain(self) -> list[Event]:
        with self._lock:
            items = list(self._events)
            self._events.clear()
            self._woken = False
        return [item.event() if isinstance(item, _Tokens) else item for item in items]


@dataclass
class Decide:
    """A decision on proposal `index`; dropped if another proposal is pending by then."""

    decision: Decision
    index: int


@dataclass
class Undo:
    to_index: int | None
    force: bool = False


@dataclass
class UndoRefused:
    """Not a session event: an undo would overwrite changes made outside the session."""

    to_index: int | None
    error: UnsafeRestore


@dataclass
class UserCommand:
    command: str


@dataclass
class UserMessage:
    text: str


@dataclass
class Call:
    """Run `fn(session)` on the session's thread; `on_done(result, error)` is called after."""

    fn: Callable[[Session], object]
    on_done: Callable[[object, BaseException | None], None]


@dataclass
class Paused:
    """Not a session event: the driver stopped proposing (after esc) and waits for the user."""


class Continue:
    """Resume proposing after a stop (esc)."""


class Wake:
    """Re-check the policy (auto mode or a new rule may now approve the pending step)."""


class Close:
    """Leave the loop; the session is closed."""


Command = Decide | Undo | UserCommand | UserMessage | Call | Continue | Wake | Close


class SessionDriver:
    """The loop the TUI runs in its session thread.

    It proposes whenever no proposal is pending (unless stopped), approves on its own what
    auto mode or the always-allow rules cover, and otherwise waits for the user's command.
    """

    def __init__(self, session: Session, inbox: EventInbox, *, auto: bool = False) -> None:
        self.session = session
        self.inbox = inbox
        self.rules = RulesPolicy(allow_kinds=set(), allow_prefixes=[], fallback=AutoPolicy())
        self.auto = auto
        self.paused = False
        self._commands: queue.Queue[Command] = queue.Queue()
        session.subscribe(inbox.put)

    def send(self, command: Command) -> None:
        """Thread-safe: queue a command for the session thread."""
        self._commands.put(command)

    def stop_generation(self) -> None:
        """Thread-safe: stop the model now and wait for the user before proposing again."""
        self.paused = True
        self.session.cancel()

    def interrupt_command(self) -> None:
        """Thread-safe: kill the bash command running now (its observation says so)."""
        self.session.executor.interrupt()

    def approves_on_its_own(self, proposal: StepProposed) -> bool:
        """True when auto mode or an always-allow rule covers `proposal`."""
        return self.auto or self.rules.allows(proposal)

    def run(self) -> None:
        """The session thread's body (starts the session unless it was resumed); ends on `Close`."""
        session = self.session
        if not session.started:
            session.start()
        while True:
            if session.finished is None and session.pending is not None:
                if self.approves_on_its_own(session.pending):
                    session.decide(Approve())
                    continue
                command = self._commands.get()
            elif session.finished is None and not self.paused:
                try:
                    command = self._commands.get_nowait()
                except queue.Empty:
                    session.propose()
                    if self.paused and session.pending is None and session.finished is None:
                        self.inbox.put(Paused())
                    continue
            else:
                command = self._commands.get()
            if isinstance(command, Close):
                return
            self._apply(command)

    def _apply(self, command: Command) -> None:
        session = self.session
        try:
            if isinstance(command, Decide):
                self.paused = False
                if session.pending is not None and session.pending.index == command.index:
                    session.decide(command.decision)
            elif isinstance(command, Undo):
                try:
                    session.undo(command.to_index, force=command.force)
                except UnsafeRestore as refused:
                    self.inbox.put(UndoRefused(command.to_index, refused))
            elif isinstance(command, UserCommand):
                if session.pending is not None:
                    session.decide(Reject(INSTEAD_OF_PROPOSAL))
                session.run_user_command(command.command)
            elif isinstance(command, UserMessage):
                self.paused = False
                session.add_user_message(command.text)
            elif isinstance(command, Call):
                self._call(command)
            elif isinstance(command, Continue):
                self.paused = False
        except Exception as error:  # noqa: BLE001 - shown to the user, the loop keeps going
            self.inbox.put(SessionError(message=f"{type(error).__name__}: {error}"))

    def _call(self, command: Call) -> None:
        try:
            result = command.fn(self.session)
        except Exception as error:  # noqa: BLE001 - handed back to the caller
            command.on_done(None, error)
        else:
            command.on_done(result, None)
