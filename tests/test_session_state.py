"""The live session's state is the fold of its own log through the one reducer."""

from __future__ import annotations

from agent_core.actions import Bash
from agent_core.events import FormatError, StepExecuted, StepRejected, StepUndone, UserMessage
from agent_core import history
from agent_core.session_state import SessionState
from agent_core.steps import Approve, EditAction, Quit, Reject, StepStatus
from agent_core.trajectory import TrajectoryWriter, read_trajectory, record_to_dict
from tests.test_session import sessions, write_script  # noqa: F401 (a fixture)


def comparable(state: SessionState) -> tuple:
    return (
        [record_to_dict(r) for r in state.records],
        state.entries,
        state.messages,
        state.format_errors,
        state.model_turns_used,
        state.pending.index if state.pending else None,
    )


def test_the_live_state_is_the_fold_of_the_log(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: look\nAction: bash echo one > one.txt",
        "no action in this reply at all",
        "Thought: delete\nAction: bash rm -rf calc",
        "Thought: list\nAction: bash ls",
        "Thought: two\nAction: bash echo two > two.txt",
        "Thought: three\nAction: bash echo three > three.txt",
        "Thought: four\nAction: bash echo four > four.txt",
    ])
    session, _, events = sessions(git_repo, script, "text")
    log = tmp_path / "log.jsonl"
    session.subscribe(TrajectoryWriter(log))
    kinds: list[type] = []
    session.subscribe(lambda event: kinds.append(type(event)))

    def check() -> None:
        folded = history.fold(read_trajectory(log).events, session.dialect)
        assert comparable(folded) == comparable(session.state)

    session.propose()
    session.decide(Approve())
    assert session.propose() is None  # a format error
    check()
    session.propose()
    session.decide(Reject("not that"))
    session.propose()
    session.decide(EditAction(Bash("echo edited > edited.txt")))
    session.add_user_message("keep it small")
    session.run_user_command("echo mine > mine.txt")
    check()
    session.propose()
    (git_repo / "by-hand.txt").write_text("the user's edit\n")
    session.decide(Approve())  # the user's edit becomes a checkpoint of its own first
    assert any(r.status is StepStatus.USER_EDITS for r in session.records)
    check()
    session.undo(2)
    check()
    session.propose()
    session.decide(Approve())
    session.propose()  # left pending
    check()
    session.decide(Quit())
    assert {FormatError, StepExecuted, StepRejected, StepUndone, UserMessage} <= set(kinds)
    folded = history.fold(read_trajectory(log).events, session.dialect)
    assert comparable(folded) == comparable(session.state)
    assert folded.finished is not None and folded.finished.reason == "quit"
    assert [r.index for r in session.records] == [1, 2, 3]


def test_every_reader_of_a_log_sees_what_the_session_saw(git_repo, tmp_path, sessions):
    """Resume, the sessions list, exports and learning read one fold (agent_core.history): after
    undos and messages they agree with the live session on what stands."""
    from agent_core.exports import effective_steps, training_history
    from agent_core.learn.history import model_turns
    from agent_core.resume import load_state
    from agent_core.trajectory import _facts

    script = write_script(tmp_path / "s.jsonl", [
        "Thought: one\nAction: bash echo one > one.txt",
        "Thought: two\nAction: bash echo two > two.txt",
        "Thought: no\nAction: bash rm -rf calc",
        "Thought: three\nAction: bash echo three > three.txt",
        "Thought: four\nAction: bash echo four > four.txt",
    ])
    session, _, _ = sessions(git_repo, script, "text")
    log = tmp_path / "log.jsonl"
    session.subscribe(TrajectoryWriter(log))
    session.propose()
    session.decide(Approve())
    session.add_user_message("before two")
    session.propose()
    session.decide(Approve())
    session.add_user_message("after two")
    session.propose()
    session.decide(Reject("no deleting"))
    session.undo(2)
    session.add_user_message("after the undo")
    session.propose()
    session.decide(Approve())
    session.propose()
    session.decide(Quit())
    trajectory = read_trajectory(log)

    live = [r.index for r in session.records]
    assert live == [1, 2, 3]
    assert [r.index for r in history.standing_records(trajectory.events)] == live
    assert history.standing_messages(trajectory.events) == [
        (1, "before two"), (2, "after two"), (2, "after the undo")]  # (undo 2 keeps step 2's)
    assert [r.index for r in load_state(trajectory).state.records] == live
    assert [s.record.index for s in effective_steps(trajectory)] == live
    assert [t.index for t in model_turns(trajectory)] == live
    turns, rejected = training_history(trajectory, "text")
    said = [t.observation for t in turns if not t.assistant]
    assert len(said) == 3 and "before two" in said[0] and "after the undo" in said[2]
    assert not rejected and not any("rm -rf" in t.assistant for t in turns)
    assert _facts(trajectory)["steps"] == 3  # the sessions list's line
