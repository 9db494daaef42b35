"""Resume from the log + checkpoint refs: same conversation, crash consistency, refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.actions import StrReplaceEditor
from agent_core.backends.replay import ReplayBackend
from agent_core.events import Notice, SessionStarted, StepExecuted
from agent_core.executor import Executor
from agent_core.policy import AutoPolicy
from agent_core.resume import load_state, resume_session
from agent_core.steps import Approve, EditAction, Reject
from agent_core.stored_turns import stored_turn
from agent_core.trajectory import TrajectoryError, TrajectoryWriter, read_trajectory
from agent_core.workspace import Workspace
from tests.fixtures.repos import git
from tests.test_session import (
    BUGGY_LINE,
    FIX_SCRIPTS,
    FIXED_LINE,
    GARBAGE,
    Recorder,
    make_session,
    repo_tests_pass,
    write_script,
)

OUTPUTS = [
    "Thought: Look around.\nAction: bash ls",
    "Thought: Delete the tests.\nAction: bash rm -rf tests",  # rejected with feedback
    GARBAGE,  # a format error
    "Thought: Read it.\nAction: read calc/ops.py",
    "Thought: Break more.\nAction: bash echo broken >> README.md",  # undone
    f"Thought: Fix it.\nAction: edit calc/ops.py 7 7\n{BUGGY_LINE}",  # the user edits it
    f"Thought: Test it.\nAction: bash {FIX_SCRIPTS['text'][3].split('bash ', 1)[1]}",
    "Thought: Done.\nAction: submit",
]


@pytest.fixture
def closing():
    made = []
    yield made.append
    for session in made:
        session.close()


def logged(repo: Path, script: Path, **config):
    session, recorder, events = make_session(repo, script, "text", **config)
    log = repo / ".git" / "navtui" / "sessions" / f"{session.id}.jsonl"
    session.subscribe(TrajectoryWriter(log))
    return session, recorder, log


def resumed(repo: Path, log: Path, script: Path, **overrides):
    """A resumed session over `repo` with a fresh replay of `script`; returns it and its events."""
    events: list = []
    recorder = Recorder(ReplayBackend(script, delay=0.001))
    session = resume_session(
        log,
        workspace=Workspace.open(repo),
        executor=Executor(repo, command_timeout=60.0),
        backend=recorder,
        listeners=[events.append, TrajectoryWriter(log, resumed=True)],
        **overrides,
    )
    return session, recorder, events


def drive_to_the_edit(session) -> None:
    """Approve, reject, format error, approve, user command, approve + undo, user's edit."""
    session.start()
    session.propose()
    session.decide(Approve())
    session.propose()
    session.decide(Reject("never delete tests"))
    assert session.propose() is None
    session.propose()
    session.decide(Approve())
    session.run_user_command("touch NOTES.txt")
    session.add_user_message("the README must not change")
    session.propose()
    session.decide(Approve())
    session.undo()
    session.propose()
    session.decide(EditAction(StrReplaceEditor(command="str_replace", path="calc/ops.py",
                                               old_str=BUGGY_LINE, new_str=FIXED_LINE)))


def test_resumed_session_prompts_the_model_exactly_as_the_original(git_repo, tmp_path, closing):
    script = write_script(tmp_path / "s.jsonl", OUTPUTS)
    original, original_backend, log = logged(git_repo, script)
    closing(original)
    drive_to_the_edit(original)

    again, again_backend, events = resumed(git_repo, log, script)
    closing(again)
    assert [r.index for r in again.records] == [r.index for r in original.records]
    assert again.records == original.records

    theirs = original.propose()
    ours = again.propose()
    assert ours.step == theirs.step  # the replay was fast-forwarded past the used turns
    assert again_backend.prompts[-1] == original_backend.prompts[-1]
    assert "never delete tests" in again_backend.prompts[-1].text
    assert "the README must not change" in again_backend.prompts[-1].text
    assert "broken" not in again_backend.prompts[-1].text

    assert isinstance(events[0], SessionStarted) and events[0].session_id == original.id
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == [f"resumed session {original.id} after 4 executed step(s)"]


def test_resume_finishes_the_session_and_the_log_tells_the_whole_story(git_repo, tmp_path,
                                                                        closing):
    script = write_script(tmp_path / "s.jsonl", OUTPUTS)
    original, _, log = logged(git_repo, script)
    closing(original)
    drive_to_the_edit(original)
    original.close()

    again, _, _ = resumed(git_repo, log, script)
    closing(again)
    finished = again.run(AutoPolicy())
    assert finished.reason == "submitted"
    assert repo_tests_pass(git_repo) and (git_repo / "NOTES.txt").exists()
    assert f"+{FIXED_LINE}" in finished.patch and "broken" not in finished.patch

    state = load_state(read_trajectory(log))
    assert [r.index for r in state.records] == [1, 2, 3, 4, 5, 6, 7]
    assert read_trajectory(log).finished.reason == "submitted"


def test_a_tree_changed_mid_step_is_kept_or_with_force_restored(git_repo, tmp_path, closing):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    original, _, log = logged(git_repo, script)
    closing(original)
    original.start()
    for _ in range(3):  # search, read, edit
        original.propose()
        original.decide(Approve())
    fixed = (git_repo / "calc/ops.py").read_text()
    # The process dies while a command runs: files half written, a step checkpointed but not
    # logged, HEAD moved by the command.
    (git_repo / "calc/ops.py").write_text("half written")
    (git_repo / "scratch.txt").write_text("temp")
    original.workspace.checkpoint(4)
    git(git_repo, "commit", "-qam", "the model committed")

    kept, _, events = resumed(git_repo, log, script)
    kept.close()
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert len(notices) == 2 and "calc/ops.py, scratch.txt, HEAD" in notices[1]
    assert "stopped between steps" in notices[1] and "kept" in notices[1]
    assert (git_repo / "calc/ops.py").read_text() == "half written"
    assert [c.index for c in Workspace.open(git_repo).attach(original.id)] == [0, 1, 2, 3]

    again, _, events = resumed(git_repo, log, script, overwrite_changes=True)
    closing(again)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert len(notices) == 2 and "restored checkpoint 3" in notices[1]
    assert f"refs/navtui/{original.id}/before-resume-1" in notices[1]
    assert (git_repo / "calc/ops.py").read_text() == fixed
    assert not (git_repo / "scratch.txt").exists()
    assert git(git_repo, "log", "--format=%s").splitlines() == ["initial"]
    assert [c.index for c in again.workspace.checkpoints] == [0, 1, 2, 3]
    assert len(again.records) == 3

    finished = again.run(AutoPolicy())
    assert finished.reason == "submitted" and repo_tests_pass(git_repo)


def test_logged_steps_whose_checkpoints_are_gone_are_dropped(git_repo, tmp_path, closing):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    original, _, log = logged(git_repo, script)
    closing(original)
    original.start()
    for _ in range(3):
        original.propose()
        original.decide(Approve())
    # Killed during an undo to step 1: refs already gone, StepUndone not yet logged.
    original.workspace.restore(1)

    again, _, events = resumed(git_repo, log, script)
    closing(again)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("steps [2, 3]" in n for n in notices)
    assert [r.index for r in again.records] == [1]
    assert BUGGY_LINE in (git_repo / "calc/ops.py").read_text()


def test_submitted_sessions_are_not_resumed(git_repo, tmp_path, closing):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    original, _, log = logged(git_repo, script)
    closing(original)
    assert original.run(AutoPolicy()).reason == "submitted"
    with pytest.raises(TrajectoryError, match="already submitted"):
        resumed(git_repo, log, script)


def test_resume_applies_overrides_and_keeps_counting_steps(git_repo, tmp_path, closing):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    original, _, log = logged(git_repo, script, max_steps=2)
    closing(original)
    assert original.run(AutoPolicy()).reason == "limit"

    again, _, _ = resumed(git_repo, log, script, max_steps=3)
    closing(again)
    assert again.config.max_steps == 3 and again.config.dialect == "text"
    finished = again.run(AutoPolicy())
    assert finished.reason == "limit" and len(again.records) == 3
    assert again.records[-1].proposed.raw == FIX_SCRIPTS["text"][2]


def test_a_log_without_a_start_is_refused(tmp_path):
    log = tmp_path / "empty.jsonl"
    writer = TrajectoryWriter(log)
    writer.meta(note="no session here")
    writer.close()
    with pytest.raises(TrajectoryError, match="no SessionStarted"):
        load_state(read_trajectory(log))


def test_an_auto_dialect_session_resumes_in_the_dialect_it_settled_on(git_repo, tmp_path,
                                                                     closing):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["xml"])
    session, _, events = make_session(git_repo, script, "auto")
    log = tmp_path / "auto.jsonl"
    session.subscribe(TrajectoryWriter(log))
    closing(session)
    session.start()
    session.propose()
    session.decide(Approve())
    assert read_trajectory(log).config["dialect"] == "auto"
    assert read_trajectory(log).dialect == "xml"

    again, _, _ = resumed(git_repo, log, script)
    closing(again)
    assert again.config.dialect == "xml"
    finished = again.run(AutoPolicy())
    assert finished.reason == "submitted" and repo_tests_pass(git_repo)


def test_a_session_still_running_elsewhere_is_not_resumed(git_repo, tmp_path, closing):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    session, _, log = logged(git_repo, script)
    closing(session)
    session.start()
    session.propose()
    session.decide(Approve())
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lines = log.read_text().splitlines()
        header = json.loads(lines[0])
        assert header["type"] == "writer"
        header["pid"] = sleeper.pid  # as if another navtui process were writing this log
        log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
        with pytest.raises(TrajectoryError, match=f"still running \\(process {sleeper.pid}\\)"):
            resumed(git_repo, log, script)
    finally:
        sleeper.kill()
        sleeper.wait()
    again, _, _ = resumed(git_repo, log, script)  # its process is gone: resumable
    closing(again)
    assert [r.index for r in again.records] == [1]


def test_turns_are_resumed_as_stored_even_before_the_dialect_settled(git_repo, tmp_path,
                                                                     closing):
    """Under --dialect auto, turns written before the first parseable reply use the default
    prompt shape; resume must read back the stored text, not re-derive it in the settled one."""
    outputs = [GARBAGE, "Thought: Look.\nAction: bash ls",
               "Thought: Read it.\nAction: read calc/ops.py"]
    script = write_script(tmp_path / "s.jsonl", outputs)
    original, original_backend, _ = make_session(git_repo, script, "auto")
    closing(original)
    log = git_repo / ".git" / "navtui" / "sessions" / f"{original.id}.jsonl"
    original.subscribe(TrajectoryWriter(log))
    original.start()
    original.run_user_command("echo from-user")
    original.add_user_message("be careful")
    assert original.propose() is None  # a format error, still in the default shape
    original.propose()
    original.decide(Approve())
    assert original.config.dialect == "text"

    # user command, user message, format error, executed step: the two steps carry theirs
    turns = [e.turn for e in original.state.entries]
    assert not turns[2].observation.startswith("Observation:")  # the default (toolcall) shape
    logged_records = [e.record for e in read_trajectory(log).events if isinstance(e, StepExecuted)]
    assert [stored_turn(r) for r in logged_records] == [turns[0], turns[3]]

    again, again_backend, _ = resumed(git_repo, log, script)
    closing(again)
    assert again.state.entries == original.state.entries
    theirs, ours = original.propose(), again.propose()
    assert ours.step == theirs.step
    assert again_backend.prompts[-1] == original_backend.prompts[-1]
