"""The durable JSONL log: lossless round trip of every event, scrubbing, torn lines, listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.actions import Bash, Edit, StrReplaceEditor, Submit
from agent_core.backends.base import Usage
from agent_core.events import (
    FormatError,
    Notice,
    SessionError,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    TokenStreamed,
    TurnStarted,
    UsageReported,
    UserMessage,
)
from agent_core.steps import (
    Approve,
    Checkpoint,
    EditAction,
    Observation,
    ProposedStep,
    Quit,
    Reject,
    StepRecord,
)
from agent_core.trajectory import (
    REDACTED,
    TrajectoryError,
    TrajectoryWriter,
    cap_strings,
    default_path,
    event_from_dict,
    event_to_dict,
    find_trajectory,
    list_sessions,
    read_trajectory,
    redact,
    redact_event,
    repo_state_dir,
    scrub,
)
from agent_core.redaction import for_log
from tests.fixtures.repos import git

STEP = ProposedStep(
    thought="look at ops",
    action=Edit(path="calc/ops.py", start=7, end=7,
                content="    return sum(values) / len(values)\n"),
    raw="Thought: look at ops\nAction: edit calc/ops.py 7 7\n"
        "    return sum(values) / len(values)\n",
    dialect="text",
)
CHECKPOINT = Checkpoint(index=1, ref="refs/navtui/s1/1", commit="ab" * 20, head="cd" * 20,
                        branch="main")


def all_events() -> list:
    executed = StepRecord(
        index=1,
        proposed=STEP,
        decision=EditAction(StrReplaceEditor(command="view", path="x.py", view_range=[1, 3])),
        action=StrReplaceEditor(command="view", path="x.py", view_range=[1, 3]),
        observation=Observation(output="1\tx", exit_code=0, truncated=True, error=None),
        checkpoint=CHECKPOINT,
        diff="--- a\n+++ b\n",
        extra={"user_command": False},
    )
    rejected = StepRecord(index=2, proposed=STEP, decision=Reject("not that file"))
    return [
        SessionStarted("s1", "Fix average\nmore", {"dialect": "text", "max_steps": 5}),
        TurnStarted(1),
        FormatError(1, "garbage", "no Action: line", 1),
        StepProposed(1, STEP, "edit calc/ops.py 7 7", "@@ -7 +7 @@"),
        StepExecuted(executed),
        StepRejected(rejected),
        StepProposed(3, ProposedStep("", Submit(), "Action: submit", "text"), "submit"),
        StepExecuted(StepRecord(index=3, proposed=STEP, decision=Approve(), action=Bash("ls"))),
        StepExecuted(StepRecord(index=4, proposed=STEP, decision=Quit())),
        StepUndone(0, ["calc/ops.py"]),
        UsageReported(1, Usage(10, 5, 2, 0.1, 50.0), 15, 4096),
        Notice("restored"),
        UserMessage("look at ops.py first"),
        SessionError("boom"),
        SessionFinished("submitted", "done", "diff --git a/x b/x\n"),
    ]


def test_every_event_round_trips_through_json():
    for event in all_events():
        line = json.dumps(event_to_dict(event))
        assert event_from_dict(json.loads(line)) == event


def test_unknown_event_type_is_rejected():
    with pytest.raises(ValueError, match="unknown event type"):
        event_from_dict({"type": "Nope"})


def test_writer_appends_every_event_but_tokens(tmp_path: Path):
    path = tmp_path / "deep" / "s1.jsonl"
    writer = TrajectoryWriter(path)
    events = all_events()
    for event in events[:3]:
        writer(event)
        writer(TokenStreamed(1, "tok"))
    # Flushed as it happens: readable while the writer is still open.
    assert read_trajectory(path).events == events[:3]
    for event in events[3:]:
        writer(event)
    writer.close()
    trajectory = read_trajectory(path)
    assert trajectory.events == events
    assert trajectory.writer_pids == [os.getpid()]
    assert not any(isinstance(e, TokenStreamed) for e in trajectory.events)
    assert trajectory.issue == "Fix average\nmore"
    assert trajectory.finished == events[-1]


def test_api_keys_never_reach_the_file(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    writer = TrajectoryWriter(path, secrets=["sk-live-123"])
    config = {"dialect": "toolcall", "backend_info": {"api_key": "sk-live-123", "model": "m",
                                                      "headers": {"Authorization": "Bearer x"},
                                                      "base_url": "http://me:hunter2@h:8000/v1"}}
    writer(SessionStarted("s", "issue", config))
    writer(Notice("server said: bad key sk-live-123"))
    writer.close()
    text = path.read_text()
    assert "sk-live-123" not in text and "Bearer x" not in text and "hunter2" not in text
    started = read_trajectory(path).started
    assert started.config["backend_info"] == {
        "api_key": REDACTED, "model": "m", "headers": {"Authorization": REDACTED},
        "base_url": f"http://me:{REDACTED}@h:8000/v1",
    }


def test_the_log_walk_does_what_scrub_redact_and_cap_do_one_after_another():
    long = "x" * 70 + "sk-live-123" + "y" * 70  # a secret past the cut's head
    value = {"api_key": "sk-live-123", "n": 3, "empty_token": "", "items": [
        {"url": "https://u:pw@h/x", "text": long, "nested": ["sk-live-123 again", None, 1.5]},
    ], "Authorization": ["not a string", "stays"]}
    for limit in (None, 40, 10_000):
        expected = redact(scrub(value), ["sk-live-123", "no"])
        if limit is not None:
            expected = cap_strings(expected, limit)
        assert for_log(value, ["sk-live-123", "no"], limit) == expected
    assert "sk-live-123" not in json.dumps(for_log(value, ["sk-live-123"], 40))


def test_redacting_an_event_copies_it_only_where_something_was_redacted():
    clean = Notice("nothing secret here")
    assert redact_event(clean, ["sk-live-123"]) is clean
    secret = Notice("key sk-live-123 at https://me:pw@h/v1")
    redacted = redact_event(secret, ["sk-live-123"])
    assert redacted.message == f"key {REDACTED} at https://me:{REDACTED}@h/v1"
    assert secret.message == "key sk-live-123 at https://me:pw@h/v1"  # the session's own event


def test_torn_last_line_is_ignored_but_a_torn_middle_line_is_an_error(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    writer = TrajectoryWriter(path)
    writer(SessionStarted("s", "issue", {}))
    writer(Notice("one"))
    writer.close()
    with path.open("a") as f:
        f.write('{"type": "Notice", "mess')
    assert [type(e).__name__ for e in read_trajectory(path).events] == ["SessionStarted", "Notice"]
    with path.open("a") as f:
        f.write('\n{"type": "Notice", "message": "after", "t": 1}\n')
    with pytest.raises(TrajectoryError, match="not a JSON line"):
        read_trajectory(path)


def test_missing_log_says_how_to_find_sessions(tmp_path: Path):
    with pytest.raises(TrajectoryError, match="navtui sessions"):
        read_trajectory(tmp_path / "none.jsonl")


def test_finish_before_a_resume_does_not_count(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    first = TrajectoryWriter(path)
    first(SessionStarted("s", "issue", {}))
    first(SessionFinished("quit", "bye"))
    first.close()
    assert read_trajectory(path).finished.reason == "quit"
    resumed = TrajectoryWriter(path, resumed=True)
    assert read_trajectory(path).finished.reason == "quit"  # nothing written before an event
    resumed(Notice("resumed"))
    resumed.close()
    assert read_trajectory(path).finished is None
    assert len(read_trajectory(path).writer_pids) == 2


def _executed(index: int) -> StepExecuted:
    return StepExecuted(StepRecord(index=index, proposed=STEP, decision=Approve(),
                                   action=STEP.action, checkpoint=CHECKPOINT))


def test_list_sessions_reports_steps_and_status(git_repo: Path):
    state = repo_state_dir(git_repo)
    assert state == (git_repo / ".git" / "navtui").resolve()

    done = TrajectoryWriter(default_path(state, "aaa111"))
    done(SessionStarted("aaa111", "Fix average\nit divides wrong", {}))
    for i in (1, 2, 3):
        done(_executed(i))
    done(StepUndone(1))
    done(_executed(2))
    done(SessionFinished("submitted", "ok"))
    done.close()

    # A session whose process died (pid of a finished child) without a SessionFinished line.
    crashed = default_path(state, "bbb222")
    child = subprocess.run(
        [sys.executable, "-c", (
            "import sys; from agent_core.trajectory import TrajectoryWriter;"
            "from agent_core.events import SessionStarted;"
            "w = TrajectoryWriter(sys.argv[1]); w(SessionStarted('bbb222', 'Crash', {}))"
        ), str(crashed)],
        check=True,
    )
    assert child.returncode == 0

    live = TrajectoryWriter(default_path(state, "ccc333"))
    live(SessionStarted("ccc333", "Live one", {}))
    sessions = {s.id: s for s in list_sessions(git_repo)}
    live.close()

    assert [sessions[k].status for k in ("aaa111", "bbb222", "ccc333")] == [
        "submitted", "interrupted", "running"
    ]
    assert sessions["aaa111"].steps == 2
    assert sessions["aaa111"].issue == "Fix average"
    assert sessions["aaa111"].started is not None
    assert git(git_repo, "status", "--porcelain") == ""


def test_find_trajectory_by_prefix_path_or_error(git_repo: Path):
    state = repo_state_dir(git_repo)
    for sid in ("abc1", "abc2", "xyz9"):
        writer = TrajectoryWriter(default_path(state, sid))
        writer(SessionStarted(sid, "issue", {}))
        writer.close()
    assert find_trajectory(git_repo, "xy").stem == "xyz9"
    assert find_trajectory(git_repo, "abc1").stem == "abc1"
    direct = default_path(state, "abc2")
    assert find_trajectory(git_repo, str(direct)) == direct
    with pytest.raises(TrajectoryError, match="ambiguous"):
        find_trajectory(git_repo, "abc")
    with pytest.raises(TrajectoryError, match="navtui sessions"):
        find_trajectory(git_repo, "nope")


def test_state_dir_of_a_non_repo_says_what_to_pass(tmp_path: Path):
    with pytest.raises(TrajectoryError, match="not a git repository"):
        repo_state_dir(tmp_path)


def test_state_dir_of_a_repository_top_needs_no_git_and_agrees_with_the_workspace(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from agent_core.workspace import Workspace

    link = tmp_path / "through-a-link"
    link.symlink_to(git_repo)
    expected = Workspace.open(link).state_dir
    worktree = tmp_path / "linked-worktree"
    git(git_repo, "worktree", "add", "-q", str(worktree))
    worktree_state = repo_state_dir(worktree)  # `.git` is a file there: git says where
    assert worktree_state.parent.parent == (git_repo / ".git" / "worktrees").resolve()
    broken = tmp_path / "bin"
    broken.mkdir()
    (broken / "git").write_text("#!/bin/sh\nexit 1\n")
    (broken / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{broken}{os.pathsep}{os.environ['PATH']}")
    assert repo_state_dir(link) == repo_state_dir(git_repo) == expected  # no git process asked
