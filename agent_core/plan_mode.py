"""Switching a session into plan mode and out of it (agent_core/executor/plan.py says what
plan mode allows): the executor changes the mount, and the model reads a short note about the
switch as a user turn before its next reply (logged, so a resumed session keeps it, and
`logged_mode` reads the mode a session was left in back from its log)."""

from __future__ import annotations

from agent_core.events import UserMessage
from agent_core.executor.plan import OFF_NOTE, ON_NOTE, ON_NOTE_UNSANDBOXED, switch_note
from agent_core.session import Session
from agent_core.trajectory import Trajectory


def set_plan_mode(session: Session, on: bool) -> bool:
    """Plan mode on or off for `session`; the model is told. False when it already was in
    that mode (nothing said)."""
    if not session.executor.set_plan(on):
        return False
    tell_mode(session)
    return True


def tell_mode(session: Session) -> None:
    """Tell the model which mode the session is in (one that starts or resumes in plan mode,
    or resumes out of it)."""
    executor = session.executor
    session.add_user_message(switch_note(executor.plan, executor.launcher.sandboxed))


def logged_mode(trajectory: Trajectory) -> str:
    """The mode the logged session was last told it is in: "plan" or "normal"."""
    for event in reversed(trajectory.events):
        if isinstance(event, UserMessage) and event.text in (ON_NOTE, ON_NOTE_UNSANDBOXED):
            return "plan"
        if isinstance(event, UserMessage) and event.text == OFF_NOTE:
            return "normal"
    return "normal"
