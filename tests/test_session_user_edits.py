"""Edits the user makes while a proposal waits for approval are kept as a checkpoint of their own:
the approved step's diff and its undo cover only what the step did."""

from __future__ import annotations

from pathlib import Path

from agent_core.events import Notice, StepExecuted
from agent_core.policy import AutoPolicy
from agent_core.steps import Approve, Origin, Reject, StepStatus
from tests.fixtures.repos import git
from tests.test_session import sessions, write_script  # noqa: F401 - a fixture


def two_files(repo: Path) -> None:
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "a.txt", "b.txt")
    git(repo, "commit", "-qm", "two files")


def test_edits_during_the_wait_are_kept_apart_from_the_approved_step(git_repo, tmp_path, sessions):
    two_files(git_repo)
    script = write_script(tmp_path / "s.jsonl", ["Thought: m\nAction: bash echo m >> a.txt"])
    session, _, events = sessions(git_repo, script, "text")
    proposal = session.propose()
    assert proposal.index == 1
    (git_repo / "b.txt").write_text("b, edited by hand\n")  # while the proposal waits

    step = session.decide(Approve())

    edits, executed = session.records
    assert (edits.index, edits.origin, edits.status, edits.user_edits) == (1, Origin.USER, StepStatus.USER_EDITS, ["b.txt"])
    assert "b.txt" in edits.diff and "a.txt" not in edits.diff
    assert step is executed and executed.index == 2 and executed.origin is Origin.MODEL
    assert "a.txt" in executed.diff and "b.txt" not in executed.diff
    told = [e.message for e in events if isinstance(e, Notice) and "your edits" in e.message]
    assert told == ["your edits (b.txt) are kept as checkpoint 1; the approved step runs as step 2"]
    assert [e.record.index for e in events if isinstance(e, StepExecuted)] == [1, 2]

    undone = session.undo()  # no question: nothing changed since the last checkpoint

    assert undone.to_index == 1 and undone.changed_paths == ["a.txt"]
    assert (git_repo / "a.txt").read_text() == "a\n"
    assert (git_repo / "b.txt").read_text() == "b, edited by hand\n"
    assert [r.index for r in session.records] == [1]


def test_no_edits_no_extra_checkpoint_and_auto_decisions_are_not_checked(git_repo, tmp_path,
                                                                          sessions):
    two_files(git_repo)
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: m\nAction: bash echo m >> a.txt",
        "Thought: r\nAction: bash echo r >> a.txt",
        "Thought: done\nAction: submit",
    ])
    session, _, _ = sessions(git_repo, script, "text")
    session.propose()
    session.decide(Approve())
    assert [r.index for r in session.records] == [1]
    session.propose()
    session.decide(Reject("no"))
    (git_repo / "b.txt").write_text("b2\n")
    session.decide(AutoPolicy().decide(session.propose()), waited=False)
    assert [(r.index, r.origin) for r in session.records] == [(1, Origin.MODEL), (2, Origin.MODEL), (3, Origin.MODEL)]


def test_a_resumed_session_keeps_the_edits_checkpoint_and_the_models_turns(git_repo, tmp_path):
    from tests.test_resume import logged, resumed

    two_files(git_repo)
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: m\nAction: bash echo m >> a.txt",
        "Thought: n\nAction: bash echo n >> a.txt",
    ])
    session, recorder, log = logged(git_repo, script)
    session.propose()
    (git_repo / "b.txt").write_text("b by hand\n")
    session.decide(Approve())
    first_turns = [e.turn for e in session.state.entries]
    session.close()

    again, _, _ = resumed(git_repo, log, script)
    try:
        assert [(r.index, r.origin) for r in again.records] == [(1, Origin.USER), (2, Origin.MODEL)]
        assert [e.turn for e in again.state.entries] == first_turns
        assert again.propose().index == 3
        again.undo(1)
    finally:
        again.close()
    assert (git_repo / "a.txt").read_text() == "a\n"
    assert (git_repo / "b.txt").read_text() == "b by hand\n"
