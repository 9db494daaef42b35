"""Snapshot of per-hunk review: an edit of three hunks on the card, the first dropped, the
second current (update deliberately with `--snapshot-update`, then look at the SVG)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from agent_core.actions import StrReplaceEditor
from app.tui import NavApp
from tests.fixtures.repos import make_repo
from tests.fixtures.tui import make_session
from tests.test_snapshots import freeze, until

ORIGINAL = "".join(f"value_{n} = {n}\n" for n in range(1, 31))
OLD = "".join(f"value_{n} = {n}\n" for n in range(2, 25))
NEW = OLD.replace("value_2 = 2\n", "value_2 = 2.0\n").replace(
    "value_12 = 12\n", "value_12 = 12.0\nvalue_12b = 12.5\n").replace("value_24 = 24\n", "")


def test_hunks_of_an_edit_on_the_card(tmp_path: Path, snap_compare):
    repo = make_repo(tmp_path / "repo", {"values.py": ORIGINAL})
    edit = StrReplaceEditor("str_replace", "values.py", old_str=OLD, new_str=NEW)
    session = make_session(repo, [("Make the values floats.", edit)], session_id="20260101-000000-hunks0")
    app = NavApp(session, repo="repo")

    async def reviewed(pilot: Pilot) -> None:
        await until(pilot, lambda: app.main and app.main.hunk_review is not None
                    and not app.main.query_one("#thoughts").rendering)
        await pilot.press("x")
        await pilot.pause()
        freeze(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 34), run_before=reviewed)


def test_hunks_of_a_step_that_ran(tmp_path: Path, snap_compare):
    from agent_core.actions import Bash

    repo = make_repo(tmp_path / "repo", {"values.py": ORIGINAL})
    command = "sed -i -e 's/^value_2 = 2$/value_2 = 2.0/' -e 's/^value_20 = 20$/value_20 = 20.0/' values.py"
    session = make_session(repo, [("Floats.", Bash(command)), ("Look.", Bash("true"))],
                           session_id="20260101-000000-hunks1")
    app = NavApp(session, repo="repo")

    async def reviewing_the_step(pilot: Pilot) -> None:
        await until(pilot, lambda: app.main and app.main.pending and app.main.pending.index == 1)
        await pilot.press("a")
        await until(pilot, lambda: app.main.pending and app.main.pending.index == 2
                    and app.main.check_action("step_hunks", ()))
        await pilot.press("H")
        await until(pilot, lambda: type(app.screen).__name__ == "StepHunksScreen")
        await pilot.press("x")
        await pilot.pause()
        freeze(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=reviewing_the_step)
