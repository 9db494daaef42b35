"""Pilot: the TUI shows SWE-smith's review turn like any step, and the second submit finishes."""

from __future__ import annotations

from pathlib import Path

from agent_core.actions import Bash, Submit
from app.screens.finish import FinishScreen
from tests.fixtures.tui import make_session
from tests.fixtures.running_app import main_screen, running_app, waiting_on
from widgets.step_timeline import StepTimeline


async def test_the_review_turn_is_a_step_and_the_second_submit_finishes(git_repo: Path):
    session = make_session(git_repo, [
        ("Write a note.", Bash("echo hello > note.txt")),
        ("Done.", Submit()),
        ("Reviewed.", Submit()),
    ])
    session.config.submit_review = True
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3 after the review")
        main = main_screen(app)
        assert not isinstance(app.screen, FinishScreen)
        assert main.query_one(StepTimeline).entries[2].status == "executed"
        assert "Thank you for your work on this issue." in session.backend.prompt_text(2)
        await pilot.press("a")
        await watch.until(lambda: isinstance(app.screen, FinishScreen), "finish screen")
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 0
