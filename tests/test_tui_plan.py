"""Pilot tests of plan mode's key: `p` switches it on and off, the status bar shows PLAN, the
model reads a note about each switch, and in plan mode nothing the model runs changes a file
(the sandbox's read-only mount, or, without one, the read-only command list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.actions import Bash, Submit
from agent_core.executor import Executor
from agent_core.executor.plan import BASH_REFUSED, OFF_NOTE, ON_NOTE, ON_NOTE_UNSANDBOXED
from agent_core.executor.sandbox import Plain
from app.screens.help import HelpScreen
from app.screens.plan_key import REFUSED
from tests.fixtures.running_app import main_screen, running_app, waiting_on
from tests.fixtures.tui import make_session, showing
from tests.test_sandbox import needs_bwrap, sandboxed
from widgets.action_card import ActionCard


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)])
async def test_p_switches_plan_mode_and_the_status_bar_says_plan(git_repo: Path, sandbox: bool):
    turns = [("Write.", Bash("echo x > f.txt")), ("Again.", Bash("echo y > g.txt")), ("Done.", Submit())]
    session = make_session(git_repo, turns)
    session.executor = Executor(git_repo, command_timeout=30,
                                launcher=sandboxed(git_repo) if sandbox else Plain(git_repo))
    async with running_app(session, git_repo) as (app, pilot, watch):
        main = main_screen(app)
        status = main.query_one("#status")
        assert status.mode == "" and "PLAN" not in str(status.render())
        await pilot.press("p")
        await watch.until(lambda: status.mode == "PLAN", "PLAN in the status bar")
        assert "PLAN" in str(status.render()) and session.executor.plan
        card = main.query_one(ActionCard)
        if sandbox:  # the command runs, under the read-only mount
            assert "(read-only: plan mode), network off" in card.border_subtitle
        else:
            assert card.border_subtitle == REFUSED
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert not (git_repo / "f.txt").exists()
        observation = session.records[0].observation
        if sandbox:
            assert "Read-only file system" in observation.output
        else:
            assert observation.error.startswith(BASH_REFUSED.split(":")[0])
        assert (ON_NOTE if sandbox else ON_NOTE_UNSANDBOXED) in session.backend.prompt_text(1)
        await pilot.press("p")
        await watch.until(lambda: status.mode == "", "PLAN gone from the status bar")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3")
        assert (git_repo / "g.txt").read_text() == "y\n"
        assert OFF_NOTE in session.backend.prompt_text(2)
        await pilot.press("question_mark")
        await watch.until(lambda: showing(app, HelpScreen), "help")
        assert any(row.binding_id == "navtui.plan" and row.keys == "p"
                   for row in main.key_rows())
