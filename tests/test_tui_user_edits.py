"""Pilot: edits the user makes while a proposal waits show up as their own checkpoint, and
undoing that checkpoint asks first."""

from __future__ import annotations

from pathlib import Path

from agent_core.actions import Bash
from app.screens.confirm import ConfirmScreen
from tests.fixtures.repos import git
from tests.fixtures.tui import make_session, showing
from tests.fixtures.running_app import main_screen, running_app, waiting_on
from widgets.diff_view import DiffView
from widgets.step_timeline import StepTimeline


async def test_edits_during_the_wait_get_their_own_timeline_entry_and_survive_undo(git_repo: Path):
    (git_repo / "a.txt").write_text("a\n")
    (git_repo / "b.txt").write_text("b\n")
    git(git_repo, "add", "a.txt", "b.txt")
    git(git_repo, "commit", "-qm", "two files")
    session = make_session(git_repo, [("Append.", Bash("echo m >> a.txt")),
                                      ("Again.", Bash("echo n >> a.txt")),
                                      ("Again.", Bash("echo o >> a.txt")),
                                      ("Once more.", Bash("echo p >> a.txt"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        (git_repo / "b.txt").write_text("b by hand\n")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3 (your edits are 1, the step 2)")
        main = main_screen(app)
        entries = main.query_one(StepTimeline).entries
        assert (entries[1].status, entries[1].summary) == ("user", "your edits: b.txt")
        assert entries[2].status == "executed" and entries[3].status == "pending"
        shown = main.query_one(DiffView).documents["step"].diff
        assert "a/a.txt" in shown and "b.txt" not in shown
        await pilot.press("u")
        await watch.until(lambda: waiting_on(app, 2), "new proposal 2 after the undo")
        assert (git_repo / "a.txt").read_text() == "a\n"
        assert (git_repo / "b.txt").read_text() == "b by hand\n"
        assert [r.index for r in session.records] == [1]
        await pilot.press("u")  # now the user's own edits: asked first
        await watch.until(lambda: showing(app, ConfirmScreen), "undo of your edits asks")
        assert "b.txt" in app.screen.explanation
        await pilot.press("n")
        await watch.until(lambda: waiting_on(app, 2), "back to proposal 2: nothing undone")
        assert (git_repo / "b.txt").read_text() == "b by hand\n"
        await pilot.press("u")
        await watch.until(lambda: showing(app, ConfirmScreen), "asked again")
        await pilot.press("y")
        await watch.until(lambda: waiting_on(app, 1), "new proposal 1 after undoing your edits")
    assert (git_repo / "b.txt").read_text() == "b\n"
    assert session.records == []
