"""Runs a Session in one worker thread for a front end (the TUI): commands go in, events come
out in order. What it approves on its own is `agent_core.policy.Approvals`' call, the same one
`--plain` and `--auto` make.

One channel each way: the UI sends commands (`SessionDriver.send`), the driver puts the
session's events and its own (`DriverEvent`) in an `EventInbox` the UI drains. The session's
own thread is the only one that calls `propose`, `decide`, `undo`, ...; the UI thread only
enqueues commands and, to stop a generation or a command, calls the thread-safe
`stop_generation` / `interrupt_command`.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_core.events import (
    Event,
    SessionError,
    StepExecuted,
    StepProposed,
    StepUndone,
    TokenStreamed,
    TurnStarted,
)
from agent_core.git import UnsafeRestore, WorkspaceError
from agent_core.policy import Approvals
from agent_core.steps import Decision, Reject

if TYPE_CHECKING:
    from agent_core.session import Session


# While a session thread runs beside the UI: how long (s) a thread holding the GIL keeps it when
# another wants it (Python's default is 5 ms). The session thread gives up the GIL at every
# command, git call and pty read; each time it gets it back only after the UI thread, busy
# rendering, reaches a switch point. At 5 ms that made a step on a 10k-file repository ~1.2x
# slower in auto mode than at 1 ms (bench/step_overhead.py); the UI's own CPU time does not grow.
SWITCH_INTERVAL = 0.001
# Seconds between session diffs that no one sees (auto mode, another tab shown).
UNSEEN_PACE = 2.0


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
        self._events: deque[Event | DriverEvent | _Tokens] = deque()
        self._lock = threading.Lock()
        self._woken = False

    def put(self, event: Event | DriverEvent) -> None:
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

    def put_together(self, events: list[Event | DriverEvent]) -> None:
        """Put `events` so that one drain takes them all (the UI never sees one without the rest)."""
        with self._lock:
            self._events.extend(events)
            wake, self._woken = not self._woken, True
        if wake:
            self._wake()

    def drain(self, *, live_text: bool = False) -> list[Event | DriverEvent]:
        """Take every waiting event; `live_text`: only those up to the last streamed text of the
        turn being written (none if a new turn starts before it, or no text waits), leaving the
        rest, in order, for a later drain."""
        with self._lock:
            items = list(self._events)
            if live_text:
                last = max((n for n, item in enumerate(items) if isinstance(item, _Tokens)), default=-1)
                items = items[: last + 1]
                if any(isinstance(item, TurnStarted) for item in items):
                    items = []
            for _ in items:
                self._events.popleft()
            if not self._events:
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
class SetAuto:
    """Turn auto mode on or off (on: the pending proposal, if any, runs too)."""

    on: bool


@dataclass
class Allow:
    """An always-allow rule: an action `kind` (or `view`), or a bash command `prefix`; `deny`:
    a deny rule (such proposals are rejected without asking)."""

    kind: str = ""
    prefix: str = ""
    deny: bool = False


class Continue:
    """Resume proposing after a stop (esc)."""


class Close:
    """Leave the loop; the session is closed."""


Command = Decide | Undo | UserCommand | UserMessage | Call | SetAuto | Allow | Continue | Close


# Driver events: not the session's, they say what the driver itself did. They reach the UI
# through the same inbox, in order with the session's events.


@dataclass
class Paused:
    """The driver stopped proposing (after esc) and waits for the user."""


@dataclass
class UndoRefused:
    """An undo would overwrite changes made outside the session."""

    to_index: int | None
    error: UnsafeRestore


@dataclass
class AutoApproved:
    """The driver approved proposal `index` on its own; `reason` says why (auto mode or a rule).
    `rejected`: a deny rule rejected it instead."""

    index: int
    reason: str
    rejected: bool = False


@dataclass
class PolicyChanged:
    """Auto mode or the always-allow rules changed; `label` is how the status bar shows it."""

    auto: bool
    rules: int
    label: str


@dataclass
class SessionDiffReady:
    """The session's diff (checkpoint 0 -> the last checkpoint), computed off both UI and session threads."""

    diff: str


DriverEvent = Paused | UndoRefused | AutoApproved | PolicyChanged | SessionDiffReady


class SessionDiffs:
    """Computes the session diff on a thread of its own, so neither the session nor the UI waits.

    `request` (session thread) notes the newest first and last checkpoints; the diff thread diffs
    their trees (no `git add`: checkpoints are already snapshots) and puts a `SessionDiffReady` in
    the inbox. Requests that pile up while a diff runs collapse into the newest one, and a diff
    starts at least `pace` seconds, and twice the last diff's time, after the last one did: in
    auto mode steps come faster than the screen shows them (it draws a drain every 0.2 s), and a
    diff thread that ran back to back took a core (and the GIL) from the session and the UI.
    In auto mode while the session diff is not on screen (`set_auto`, `set_shown`) the pace is
    `unseen_pace`: on a large repository each diff runs git for a good part of a second, for a
    view no one looks at.
    """

    def __init__(self, session: Session, inbox: EventInbox, pace: float = 0.2,
                 unseen_pace: float = UNSEEN_PACE) -> None:
        self.session = session
        self.inbox = inbox
        self.pace = pace
        self.unseen_pace = unseen_pace
        self._auto = False
        self._shown = False
        self._wanted: tuple[int, int] | None = None
        self._closed = False
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None

    def request(self) -> None:
        checkpoints = self.session.workspace.checkpoints
        if not checkpoints:
            return
        with self._ready:
            self._wanted = (checkpoints[0].index, checkpoints[-1].index)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="navtui-session-diff", daemon=True)
                self._thread.start()
            self._ready.notify()

    def set_auto(self, auto: bool) -> None:
        """Thread-safe: auto mode is on or off."""
        with self._ready:
            self._auto = auto
            self._ready.notify()

    def set_shown(self, shown: bool) -> None:
        """Thread-safe: the session diff is on screen, or not (a diff waiting for the slow pace
        then starts at the normal one)."""
        with self._ready:
            self._shown = shown
            self._ready.notify()

    def _due(self, started: float, took: float) -> float:
        """When the next diff may start, after one that started at `started` and took `took`."""
        pace = self.unseen_pace if self._auto and not self._shown else self.pace
        return started + max(pace, 2 * took)

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()

    def _run(self) -> None:
        started, took = -1e9, 0.0  # the last diff's start and its time
        while True:
            with self._ready:
                while not self._closed and (
                    self._wanted is None or time.monotonic() < self._due(started, took)
                ):
                    self._ready.wait(None if self._wanted is None
                                     else self._due(started, took) - time.monotonic())
                if self._closed:
                    return
                wanted, self._wanted = self._wanted, None
                if wanted is None:
                    continue
                first, last = wanted
            started = time.monotonic()
            try:
                diff = self.session.workspace.diff(first, last)
            except WorkspaceError as error:
                with self._ready:
                    superseded = self._wanted is not None
                if not superseded:  # an undo that raced this diff is followed by a newer request
                    self.inbox.put(SessionError(f"could not compute the session diff: {error}"))
                continue
            finally:
                took = time.monotonic() - started
            self.inbox.put(SessionDiffReady(diff))


class SessionDriver:
    """The loop the TUI runs in its session thread.

    It proposes whenever no proposal is pending (unless stopped), approves on its own what
    auto mode or the always-allow rules cover (and says so with `AutoApproved`), and otherwise
    waits for the user's command. Auto mode and the rules live here only: the UI changes them
    with commands (`SetAuto`, `Allow`) and learns the result from `PolicyChanged`.
    """

    def __init__(self, session: Session, inbox: EventInbox, *, auto: bool = False,
                 approvals: Approvals | None = None) -> None:
        self.session = session
        self.inbox = inbox
        self.approvals = approvals or Approvals()
        self.approvals.auto = auto
        self.paused = False
        self.diffs = SessionDiffs(session, inbox)
        self.diffs.set_auto(auto)
        self._commands: queue.Queue[Command] = queue.Queue()
        self._announced: int | None = None  # a proposal whose AutoApproved went out with it
        session.subscribe(self._forward)

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

    def show_session_diff(self, shown: bool) -> None:
        """Thread-safe: the session diff came on screen, or went (see `SessionDiffs`)."""
        self.diffs.set_shown(shown)

    @property
    def auto(self) -> bool:
        return self.approvals.auto

    def policy_label(self) -> str:
        return self.approvals.label()

    def _forward(self, event: Event) -> None:
        """Session thread: pass `event` to the UI. A proposal the driver will approve on its own
        goes out together with its `AutoApproved`, so the UI never asks the user about it; a
        tree that moved (a step that changed it, an undo) asks for a fresh session diff."""
        decided = self.approvals.decision(event) if isinstance(event, StepProposed) else None
        if isinstance(event, StepProposed) and decided is not None:
            decision, reason = decided
            self._announced = event.index
            self.inbox.put_together([event, AutoApproved(event.index, reason, isinstance(decision, Reject))])
        else:
            self.inbox.put(event)
        # (a step whose diff is empty left the tree as it was: so is the session diff)
        if isinstance(event, StepUndone) or (isinstance(event, StepExecuted) and event.record.diff):
            self.diffs.request()

    def run(self) -> None:
        """The session thread's body (starts the session unless it was resumed); ends on `Close`."""
        session = self.session
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
        try:
            if not session.started:
                session.start()
            elif session.records:  # resumed: show what the earlier steps changed
                self.diffs.request()
            self._loop()
        finally:
            self.diffs.close()
            sys.setswitchinterval(interval)

    def _loop(self) -> None:
        session = self.session
        while True:
            if session.finished is None and session.pending is not None:
                proposal = session.pending
                decided = self.approvals.decision(proposal)
                if decided is not None:
                    decision, reason = decided
                    if self._announced != proposal.index:
                        self.inbox.put(AutoApproved(proposal.index, reason, isinstance(decision, Reject)))
                    self._announced = None
                    session.decide(decision, waited=False)
                    continue
                self._announced = None
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
            elif isinstance(command, UserCommand):  # beside a pending proposal, if any
                session.run_user_command(command.command)
            elif isinstance(command, UserMessage):
                self.paused = False
                session.add_user_message(command.text)
            elif isinstance(command, Call):
                self._call(command)
            elif isinstance(command, SetAuto | Allow):
                self._change_policy(command)
            elif isinstance(command, Continue):
                self.paused = False
        except Exception as error:  # noqa: BLE001 - shown to the user, the loop keeps going
            self.inbox.put(SessionError(message=f"{type(error).__name__}: {error}"))

    def _change_policy(self, command: SetAuto | Allow) -> None:
        if isinstance(command, SetAuto):
            self.approvals.auto = command.on
            self.diffs.set_auto(command.on)
        elif command.prefix:
            (self.approvals.rules.deny_prefix if command.deny else self.approvals.rules.allow_prefix)(
                command.prefix)
        elif command.kind:
            (self.approvals.rules.deny_kind if command.deny else self.approvals.rules.allow_kind)(command.kind)
        self.inbox.put(PolicyChanged(self.auto, self.approvals.rule_count, self.policy_label()))

    def _call(self, command: Call) -> None:
        try:
            result = command.fn(self.session)
        except Exception as error:  # noqa: BLE001 - handed back to the caller
            command.on_done(None, error)
        else:
            command.on_done(result, None)
