"""Non-UTF-8 bytes never crash a session: a latin-1 file name in a diff, a lone surrogate in the
model's JSON. The log keeps such text exactly (escaped) and `--resume` reads it back."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_core.actions import Bash
from agent_core.events import Notice, SessionFinished, StepProposed
from agent_core.steps import ProposedStep
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from tests.fixtures.repos import git
from tests.test_cli import navtui
from tests.test_session import write_script

LATIN1_NAME = b"caf\xe9.txt"


def latin1_repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    (Path(os.fsdecode(root)) / os.fsdecode(LATIN1_NAME)).write_bytes(b"hello\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def session_log(repo: Path) -> Path:
    (log,) = (repo / ".git/navtui/sessions").glob("*.jsonl")
    return log


def test_log_round_trips_surrogates_and_control_characters(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    text = "caf\udce9.txt \ud83d \x9b \u202e \x1b[2J \u2028 é"
    writer = TrajectoryWriter(path)
    writer(StepProposed(1, ProposedStep(text, Bash(text), text, "text"), text))
    writer(Notice(text))
    writer(SessionFinished("submitted", "done", patch=f"+++ b/{text}\n"))
    writer.close()
    raw = path.read_bytes()
    raw.decode("utf-8")  # the log itself is valid UTF-8
    assert b"\x1b" not in raw and "\x9b".encode() not in raw and "\u202e".encode() not in raw
    assert "é".encode() in raw  # ordinary non-ASCII text stays readable
    events = read_trajectory(path).events
    assert events[0].step.thought == text and events[0].step.action == Bash(text)
    assert events[1] == Notice(text)
    assert events[2].patch == f"+++ b/{text}\n"


def test_latin1_file_name_edited_submitted_and_resumed(tmp_path: Path):
    repo = latin1_repo(tmp_path / "repo")
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: append a line\nAction: bash printf 'more\\n' >> caf*.txt",
        "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--max-steps", "1", "--script", str(script), "--issue", "x", str(repo))
    assert result.returncode == 2, result.stderr  # stopped by the limit, resumable
    assert "Traceback" not in result.stderr
    log = session_log(repo)
    session_id = read_trajectory(log).session_id
    patch = tmp_path / "out.patch"
    result = navtui("--auto", "--resume", session_id, "--patch-out", str(patch), str(repo))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert LATIN1_NAME in patch.read_bytes() and b"+more" in patch.read_bytes()
    assert "caf\\xe9.txt" in result.stdout  # the transcript names the file, visibly
    finished = read_trajectory(log).finished
    assert finished is not None and finished.reason == "submitted"
    assert os.fsencode("caf\udce9.txt") in finished.patch.encode("utf-8", "surrogateescape")
    listed = navtui("sessions", "--json", str(repo))
    assert listed.returncode == 0 and json.loads(listed.stdout)["status"] == "submitted"


def test_lone_surrogate_in_model_json_is_not_a_crash(git_repo: Path, tmp_path: Path):
    call = '<tool_call>\n{"name": "bash", "arguments": {"command": "echo \\ud83d hi"}}\n</tool_call>'
    submit = '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>'
    script = write_script(tmp_path / "s.jsonl", [call, submit])
    result = navtui("--auto", "--dialect", "toolcall", "--script", str(script), "--issue", "x",
                    str(git_repo))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "echo ⟨U+D83D⟩ hi" in result.stdout
    proposed = [e for e in read_trajectory(session_log(git_repo)).events
                if isinstance(e, StepProposed)]
    assert proposed[0].step.action == Bash("echo \ud83d hi")


def test_file_tools_refuse_a_lone_surrogate_as_an_observation(git_repo: Path):
    from agent_core.actions import StrReplaceEditor
    from agent_core.executor import Executor

    with Executor(git_repo) as executor:
        create = StrReplaceEditor(command="create", path="new.txt", file_text="a \ud83d b\n")
        observation = executor.execute(create)
        assert observation.error and "U+D83D" in observation.error
        assert executor.prepare(create).preview_diff.startswith("error: ")
        bash = executor.execute(Bash("echo \ud83d"))
        assert bash.error and "U+D83D" in bash.error
    assert not (git_repo / "new.txt").exists()


def test_batch_predictions_take_a_non_utf8_patch(tmp_path: Path):
    from agent_core.batch import Predictions

    predictions = Predictions(tmp_path / "predictions.jsonl")
    patch = "diff --git a/caf\udce9.txt b/caf\udce9.txt\n"
    predictions.append({"instance_id": "i-1", "model_patch": patch})
    line = (tmp_path / "predictions.jsonl").read_text(encoding="utf-8")
    assert json.loads(line)["model_patch"] == patch
    assert predictions.finished_ids() == {"i-1"}
