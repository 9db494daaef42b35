"""Pilot: per-hunk review of an edit proposal on the main screen. The card lists the hunks;
`x` drops one, `k` keeps one, `]`/`[` move, `E` edits one; approve runs exactly the kept hunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from agent_core.actions import Bash, StrReplaceEditor
from agent_core.steps import KeepHunks, Verdict
from app.screens.help import HelpScreen
from app.screens.hunk_edit import HunkEditScreen
from tests.fixtures.repos import make_repo
from tests.fixtures.running_app import main_screen, running_app, waiting_on
from tests.fixtures.tui import make_session, showing
from widgets.hunk_list import HunkList
from widgets.step_timeline import step_line

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
OLD_BLOCK = "".join(f"line {n}\n" for n in range(3, 11))
NEW_BLOCK = OLD_BLOCK.replace("line 3\n", "line three\n").replace("line 10\n", "line ten\n")
TWO_HUNKS = StrReplaceEditor("str_replace", "notes.txt", old_str=OLD_BLOCK, new_str=NEW_BLOCK)


@pytest.fixture
def notes_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"notes.txt": ORIGINAL})


def reviewing(app) -> bool:
    main = app.main
    return main is not None and main.hunk_review is not None and waiting_on(app, 1)


async def test_dropping_one_hunk_of_two_runs_only_the_other(notes_repo: Path):
    session = make_session(notes_repo, [("Rename two lines.", TWO_HUNKS), ("Look.", Bash("true"))])
    async with running_app(session, notes_repo) as (app, pilot, watch):
        await watch.until(lambda: reviewing(app), "the proposal's hunks")
        main = main_screen(app)
        hunks = main.query_one(HunkList)
        assert hunks.display and [h.where for h in hunks.hunks] == ["line 3", "line 10"]
        enabled = {b.action for b in main.BINDINGS if main.check_action(b.action, ())}
        assert {"hunk_next", "hunk_prev", "hunk_keep", "hunk_drop", "hunk_edit"} <= enabled
        await pilot.press("x")  # drop hunk 1; the next one is current
        assert hunks.current == 1 and not hunks.choices[1].keep
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "the next proposal")
    assert (notes_repo / "notes.txt").read_text() == ORIGINAL.replace("line 10\n", "line ten\n")
    decision = session.records[0].decision
    assert isinstance(decision, KeepHunks)
    assert [o.verdict for o in decision.hunks] == [Verdict.DROPPED, Verdict.KEPT]
    assert step_line(session.records[0]).endswith("(1 of 2 hunks kept)")


async def test_a_hunk_edited_by_the_user_runs_as_written(notes_repo: Path):
    session = make_session(notes_repo, [("Rename two lines.", TWO_HUNKS), ("Look.", Bash("true"))])
    async with running_app(session, notes_repo) as (app, pilot, watch):
        await watch.until(lambda: reviewing(app), "the proposal's hunks")
        await pilot.press("right_square_bracket", "E")
        await watch.until(lambda: showing(app, HunkEditScreen), "the hunk editor")
        area = app.screen.query_one(TextArea)
        assert area.text == "line ten\n"
        area.load_text("line TEN\n")
        await pilot.press("ctrl+s")
        await watch.until(lambda: app.screen is app.main, "back on the main screen")
        assert "edited" in main_screen(app).query_one(HunkList)._header(1).plain
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "the next proposal")
    expected = ORIGINAL.replace("line 3\n", "line three\n").replace("line 10\n", "line TEN\n")
    assert (notes_repo / "notes.txt").read_text() == expected
    assert "it now reads:\nline TEN" in session.backend.prompt_text(1)


async def test_every_hunk_dropped_is_refused_and_the_keys_are_in_the_help(notes_repo: Path):
    session = make_session(notes_repo, [("Rename two lines.", TWO_HUNKS)])
    async with running_app(session, notes_repo) as (app, pilot, watch):
        await watch.until(lambda: reviewing(app), "the proposal's hunks")
        await pilot.press("x", "x", "a")
        await pilot.pause()
        assert waiting_on(app, 1)  # nothing ran
        assert (notes_repo / "notes.txt").read_text() == ORIGINAL
        await pilot.press("question_mark")
        await watch.until(lambda: showing(app, HelpScreen), "the help")
        ids = {row.binding_id for row in main_screen(app).key_rows()}
        assert {"navtui.hunk_next", "navtui.hunk_prev", "navtui.hunk_keep", "navtui.hunk_drop",
                "navtui.hunk_edit"} <= ids


async def test_a_one_hunk_edit_keeps_the_plain_diff_preview(git_repo: Path):
    fix = StrReplaceEditor("str_replace", "calc/ops.py", old_str="(len(values) + 1)", new_str="len(values)")
    session = make_session(git_repo, [("Fix.", fix)])
    async with running_app(session, git_repo) as (app, pilot, watch):
        main = main_screen(app)
        await main.run_on_session(lambda session: None)  # (after the screen's ask for the hunks)
        await pilot.pause()
        assert not main.query_one(HunkList).display and main.hunk_review is None
        assert not main.check_action("hunk_drop", ())


async def test_hunks_of_a_step_that_ran_are_put_back_and_undone(notes_repo: Path):
    """`H` after a bash step: the step's hunks; `x` marks one, enter puts it back as a
    checkpoint of the user's own, and `u` undoes that."""
    from app.screens.confirm import ConfirmScreen
    from app.screens.step_hunks import StepHunksScreen
    from agent_core.steps import StepStatus

    command = "sed -i -e 's/^line 3$/line three/' -e 's/^line 15$/line fifteen/' notes.txt"
    changed = ORIGINAL.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\n")
    session = make_session(notes_repo, [("Rename.", Bash(command)), ("Look.", Bash("true")),
                                        ("Again.", Bash("true"))])
    async with running_app(session, notes_repo) as (app, pilot, watch):
        main = main_screen(app)
        assert not main.check_action("step_hunks", ())
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "the next proposal")
        assert (notes_repo / "notes.txt").read_text() == changed
        assert main.check_action("step_hunks", ())
        await pilot.press("H")
        await watch.until(lambda: showing(app, StepHunksScreen), "the step's hunks")
        listed = app.screen.query_one(HunkList)
        assert [h.where for h in listed.hunks] == ["line 3", "line 15"]
        await pilot.press("x", "enter")
        await watch.until(lambda: waiting_on(app, 3), "the proposal, moved past the checkpoint")
        assert (notes_repo / "notes.txt").read_text() == changed.replace("line three\n", "line 3\n")
        assert session.records[-1].status is StepStatus.USER_EDITS
        await pilot.press("u")
        await watch.until(lambda: showing(app, ConfirmScreen), "undo asks about your own edits")
        await pilot.press("y")
        await watch.until(lambda: (notes_repo / "notes.txt").read_text() == changed, "the undo")


async def test_always_allow_runs_the_kept_hunks_too(notes_repo: Path):
    session = make_session(notes_repo, [("Rename two lines.", TWO_HUNKS), ("Look.", Bash("true"))])
    async with running_app(session, notes_repo) as (app, pilot, watch):
        await watch.until(lambda: reviewing(app), "the proposal's hunks")
        await pilot.press("right_square_bracket", "x", "A")
        await watch.until(lambda: waiting_on(app, 2), "the next proposal")
    assert (notes_repo / "notes.txt").read_text() == ORIGINAL.replace("line 3\n", "line three\n")
