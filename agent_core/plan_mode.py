"""Switching a session into plan mode and out of it (agent_core/executor/plan.py says what
plan mode allows): the executor changes the mount, and the model reads a short note about the
switch as a user turn before its next reply (logged, so a resumed session keeps it)."""

from __future__ import annotations

from agent_core.executor.plan import switch_note
from agent_core.session import Session


def set_plan_mode(session: Session, on: bool) -> bool:
    """Plan mode on or off for `session`; the model is told. False when it already was in
    that mode (nothing said)."""
    if not session.executor.set_plan(on):
        return False
    tell_mode(session)
    return True


def tell_mode(session: Session) -> None:
    """Tell the model which mode the session is in (a session that starts in plan mode)."""
    executor = session.executor
    session.add_user_message(switch_note(executor.plan, executor.launcher.sandboxed))
