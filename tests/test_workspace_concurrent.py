"""Undo and resume never destroy what the session did not create (the user's concurrent edits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.events import Notice, StepUndone
from agent_core.policy import AutoPolicy
from agent_core.steps import Approve
from agent_core.trajectory import TrajectoryWriter
from agent_core.workspace import UnsafeRestore, Workspace
from tests.fixtures.repos import git
from tests.test_resume import resumed
from tests.test_session import FIX_SCRIPTS, make_session, write_script
from tests.test_workspace_support import bash

STEPS = [
    "Thought: Note it.\nAction: bash echo m >> a.txt",
    "Thought: Again.\nAction: bash echo n >> a.txt",
    "Thought: Done.\nAction: submit",
]


@pytest.fixture
def session(git_repo: Path, tmp_path: Path):
    (git_repo / "b.txt").write_text("b before\n")
    made, _, events = make_session(git_repo, write_script(tmp_path / "s.jsonl", STEPS), "text")
    made.events = events
    made.start()
    made.propose()
    made.decide(Approve())
    yield made
    made.close()


def test_workspace_lists_changes_the_session_did_not_make(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo m >> a.txt")
    ws.checkpoint(1)
    assert ws.foreign_changes() == []
    (git_repo / "b.txt").write_text("the user's edit\n")
    (git_repo / "new.txt").write_text("the user's new file\n")
    assert ws.foreign_changes() == ["b.txt", "new.txt"]
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "the user commits")
    assert "HEAD" in ws.foreign_changes()[-1]


def test_undo_refuses_to_revert_a_concurrent_user_edit(session, git_repo: Path):
    (git_repo / "b.txt").write_text("the user's edit\n")
    (git_repo / "mine.txt").write_text("the user's new file\n")

    with pytest.raises(UnsafeRestore) as refused:
        session.undo()

    assert refused.value.paths == ["b.txt", "mine.txt"]
    assert "b.txt" in str(refused.value) and "force" in str(refused.value)
    assert (git_repo / "b.txt").read_text() == "the user's edit\n"
    assert (git_repo / "a.txt").read_text() == "m\n"
    assert [r.index for r in session.records] == [1]


def test_forced_undo_keeps_a_before_undo_ref_and_says_how_to_get_files_back(session,
                                                                          git_repo: Path):
    (git_repo / "b.txt").write_text("the user's edit\n")
    session.undo(force=True)

    assert not (git_repo / "a.txt").exists()
    assert (git_repo / "b.txt").read_text() == "b before\n"
    ref = f"refs/navtui/{session.id}/before-undo-1"
    assert session.events[-1] == StepUndone(0, ["a.txt", "b.txt"], ref)
    assert git(git_repo, "show", f"{ref}:b.txt") == "the user's edit\n"
    assert git(git_repo, "show", f"{ref}:a.txt") == "m\n"
    git(git_repo, "restore", f"--source={ref}", "--", "b.txt")
    assert (git_repo / "b.txt").read_text() == "the user's edit\n"


def test_plain_undo_also_keeps_what_it_undid(session, git_repo: Path):
    session.undo()
    assert session.events[-1].saved_ref.endswith("/before-undo-1")
    assert git(git_repo, "show", f"refs/navtui/{session.id}/before-undo-1:a.txt") == "m\n"


def logged(git_repo: Path, tmp_path: Path, outputs: list[str]):
    made, _, _ = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    log = git_repo / ".git" / "navtui" / "sessions" / f"{made.id}.jsonl"
    made.subscribe(TrajectoryWriter(log))
    return made, log


def test_resume_keeps_what_the_user_changed_after_a_quit(git_repo: Path, tmp_path: Path):
    script = FIX_SCRIPTS["text"]
    original, log = logged(git_repo, tmp_path, script)
    original.start()
    original.propose()
    original.decide(Approve())
    original.propose()
    from agent_core.steps import Quit

    original.decide(Quit())
    original.close()
    (git_repo / "calc/ops.py").write_text("# the user's rewrite\n")
    (git_repo / "NOTES.txt").write_text("the user's notes\n")

    again, _, events = resumed(git_repo, log, write_script(tmp_path / "r.jsonl", script))
    try:
        notices = [e.message for e in events if isinstance(e, Notice)]
        assert (git_repo / "calc/ops.py").read_text() == "# the user's rewrite\n"
        assert (git_repo / "NOTES.txt").read_text() == "the user's notes\n"
        [changed] = [n for n in notices if "NOTES.txt" in n]
        assert "calc/ops.py" in changed and "kept" in changed and "--force" in changed
        assert "mid-step" not in changed and "quit" in changed
    finally:
        again.close()


def test_resume_with_force_restores_but_saves_the_user_files_first(git_repo: Path,
                                                                   tmp_path: Path):
    script = FIX_SCRIPTS["text"]
    original, log = logged(git_repo, tmp_path, script)
    original.start()
    original.propose()
    original.decide(Approve())
    original.close()
    before = (git_repo / "calc/ops.py").read_text()
    (git_repo / "calc/ops.py").write_text("# the user's rewrite\n")

    again, _, events = resumed(git_repo, log, write_script(tmp_path / "r.jsonl", script),
                               overwrite_changes=True)
    try:
        assert (git_repo / "calc/ops.py").read_text() == before
        notice = [e.message for e in events if isinstance(e, Notice)][-1]
        ref = f"refs/navtui/{again.id}/before-resume-1"
        assert "restored" in notice and ref in notice
        assert git(git_repo, "show", f"{ref}:calc/ops.py") == "# the user's rewrite\n"
        assert again.run(AutoPolicy()).reason == "submitted"
    finally:
        again.close()
