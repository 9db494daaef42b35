"""The TUI asks before an undo overwrites files the user changed while the session ran."""

from __future__ import annotations

from pathlib import Path

from agent_core.actions import Bash
from app.screens.confirm import ConfirmScreen, OverwriteScreen
from tests.fixtures.tui import make_session
from tests.fixtures.running_app import running_app, waiting_on


async def test_undo_over_a_user_edit_asks_and_only_proceeds_when_confirmed(git_repo: Path):
    (git_repo / "b.txt").write_text("b before\n")
    turns = [("Note.", Bash("echo m >> a.txt")), ("Next.", Bash("ls")), ("More.", Bash("ls"))]
    session = make_session(git_repo, turns)
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        (git_repo / "b.txt").write_text("the user's edit\n")

        await pilot.press("u")
        await watch.until(lambda: isinstance(app.screen, OverwriteScreen), "confirm dialog")
        shown = str(app.screen.query_one(".dialog-body").render())
        assert "b.txt" in shown
        await pilot.press("n")
        await watch.until(lambda: app.screen is app.main, "back to the session")
        assert (git_repo / "b.txt").read_text() == "the user's edit\n"
        assert (git_repo / "a.txt").exists()

        await pilot.press("u")
        await watch.until(lambda: isinstance(app.screen, ConfirmScreen), "confirm dialog again")
        await pilot.press("y")
        await watch.until(lambda: waiting_on(app, 1), "new proposal 1 after the undo")
        assert not (git_repo / "a.txt").exists()
        assert (git_repo / "b.txt").read_text() == "b before\n"
        assert [r.index for r in session.records] == []


async def test_discard_at_the_finish_asks_before_overwriting_a_user_edit(git_repo: Path):
    from agent_core.actions import Submit
    from app.screens.finish import FinishScreen

    session = make_session(git_repo, [("Note.", Bash("echo n > new.txt")), ("Done.", Submit())])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("a")
        await watch.until(lambda: isinstance(app.screen, FinishScreen), "finish screen")
        (git_repo / "README.md").write_text("the user's edit during the session\n")
        await pilot.press("x")
        await watch.until(lambda: isinstance(app.screen, ConfirmScreen), "discard confirmation")
        await pilot.press("y")
        await watch.until(lambda: isinstance(app.screen, OverwriteScreen)
                          and "README.md" in str(app.screen.query_one(".dialog-body").render()),
                          "confirm dialog over the user's edit")
        assert "README.md" in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("y")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert not (git_repo / "new.txt").exists()
    ref = f"refs/navtui/{session.id}/before-undo-1"
    from tests.fixtures.repos import git

    assert git(git_repo, "show", f"{ref}:README.md") == "the user's edit during the session\n"
