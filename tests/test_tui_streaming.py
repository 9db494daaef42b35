"""The main screen while a turn streams: per-token work stays out of the widget tree."""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.widgets import Static

from agent_core.actions import Bash
from app.tui import NavApp
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import make_session
from widgets.action_card import ActionCard
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import ThoughtStream


async def test_streamed_tokens_look_up_no_widgets(git_repo: Path):
    thought = " ".join(hashlib.sha1(str(n).encode()).hexdigest()[:7] for n in range(150))
    session = make_session(git_repo, [(thought, Bash("ls"))], delay=0.002, chunk_size=2)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        main = app.main
        assert main is not None
        await watch.until(lambda: main.generating, "thinking")
        lookups: list[tuple] = []
        real = main.query_one
        main.query_one = lambda *a, **k: (  # type: ignore[method-assign]
            lookups.append(a), real(*a, **k))[1]
        wakes_before = sum(1 for m in watch.seen if type(m).__name__ == "SessionWake")
        await watch.until(lambda: main._split.in_action, "the model writes its action")
        wakes = sum(1 for m in watch.seen if type(m).__name__ == "SessionWake") - wakes_before
        main.query_one = real  # type: ignore[method-assign]
        streamed = main.query_one(ThoughtStream).text
    assert wakes > 20 and thought[-40:] in streamed  # the thought streamed in many wakes...
    # ...and no event looked a widget up: only the Footer's key checks, once per state change
    assert all(args[0] is StepTimeline for args in lookups) and len(lookups) <= 6


def test_the_app_animates_nothing_unless_textual_animations_says_so(git_repo: Path, monkeypatch):
    """The tabs' underline would slide over ~20 frames on every diff switch, in a real terminal
    (under `run_test()` Textual finishes animations at once, so only the setting is checked)."""
    session = make_session(git_repo, [("Look.", Bash("ls"))])
    try:
        monkeypatch.delenv("TEXTUAL_ANIMATIONS", raising=False)
        assert NavApp(session, repo=git_repo).animation_level == "none"
        monkeypatch.setenv("TEXTUAL_ANIMATIONS", "full")
        assert NavApp(session, repo=git_repo).animation_level == "full"
    finally:
        session.close()


async def test_the_tokens_of_an_action_update_the_card_once_it_is_named(git_repo: Path):
    names = " ".join(hashlib.sha1(str(n).encode()).hexdigest()[:7] for n in range(120))  # no loop
    command = f"touch {names}"  # not allowed without asking
    session = make_session(git_repo, [("Creating.", Bash(command))], delay=0.002, chunk_size=3)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        main = app.main
        assert main is not None
        shown: list[str] = []
        text = main.query_one("#card-command", Static)
        real = text.update
        text.update = lambda content="", **kw: (  # type: ignore[method-assign]
            shown.append(str(content)), real(content, **kw))[1]
        await watch.until(lambda: main.pending is not None, "proposal 1")
        text.update = real  # type: ignore[method-assign]
        card = main.query_one(ActionCard)
        card.show_status("thinking", "Step 1: the model is thinking…")
        card.state = "running"
        card.show_status("thinking", "Step 1: the model is thinking…")
        assert card.state == "thinking"  # a repeated status still puts its colour back
    writing = [s for s in shown if "the model is writing" in s]
    assert writing and writing[-1].endswith("writing a bash action…")
    assert len(writing) <= 2  # entering the action, then its name: not once per token
