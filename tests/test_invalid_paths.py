"""A NUL byte (or a lone surrogate) in any tool argument is the model's mistake: every file tool,
the search and the preview answer with an observation, and a session log holding such a step
resumes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_core.actions import Edit, Read, Search, StrReplaceEditor
from agent_core.executor import Executor
from agent_core.history import standing_records
from agent_core.trajectory import read_trajectory, repo_state_dir
from tests.test_resume_cli import NAVTUI
from tests.test_session import write_script

UNUSABLE = [
    StrReplaceEditor("view", "calc/ops.py\x00x"),
    StrReplaceEditor("view", "calc\x00", view_range=[1, 2]),
    StrReplaceEditor("create", "new\x00.py", file_text="x = 1\n"),
    StrReplaceEditor("str_replace", "calc/ops.py\x00", old_str="a", new_str="b"),
    StrReplaceEditor("insert", "calc/ops.py\x00", new_str="x", insert_line=0),
    StrReplaceEditor("undo_edit", "calc/ops.py\x00"),
    Read("calc/ops.py\x00"),
    Read("/testbed/calc/\ud83d.py"),
    Edit("calc/ops.py\x00", 1, 1, "x"),
    Search("def", "calc\x00"),
    Search("de\x00f", "."),
    Search("de\ud83df", "calc"),
]


@pytest.mark.parametrize("action", UNUSABLE, ids=lambda a: f"{type(a).__name__}-{a!r}"[:60])
def test_an_unusable_argument_is_an_observation(git_repo: Path, action):
    before = (git_repo / "calc/ops.py").read_bytes()
    names = sorted(p.name for p in git_repo.iterdir())
    with Executor(git_repo, command_timeout=10) as executor:
        prepared = executor.prepare(action)
        observation = executor.execute(prepared.action)
    assert observation.error is not None and observation.output == ""
    assert "NUL byte (\\x00)" in observation.error or "surrogate pair" in observation.error
    assert (git_repo / "calc/ops.py").read_bytes() == before
    assert sorted(p.name for p in git_repo.iterdir()) == names


def test_a_logged_step_with_a_nul_path_resumes(git_repo: Path, tmp_path: Path):
    def call(name: str, **arguments: object) -> str:
        return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"

    script = write_script(tmp_path / "script.jsonl", [
        call("str_replace_editor", command="view", path="/testbed/calc/ops.py\x00x"),
        call("str_replace_editor", command="create", path="/testbed/new\x00.py", file_text="x\n"),
        call("str_replace_editor", command="view", path="/testbed/calc/ops.py"),
        call("submit"),
    ])
    first = subprocess.run([NAVTUI, "--plain", "--json", "--sandbox", "off", "--dialect",
                            "toolcall", "--script", str(script), "--issue", "look", str(git_repo)],
                           input="a\na\nq\n", capture_output=True, text=True, timeout=120)
    assert first.returncode == 3, first.stdout + first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    resumed = subprocess.run([NAVTUI, "--plain", "--resume", session_id, str(git_repo)],
                             input="a\na\na\n", capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Traceback" not in resumed.stderr
    [log] = repo_state_dir(git_repo).glob(f"**/{session_id}*.jsonl")
    records = standing_records(read_trajectory(log).events)
    errors = [record.observation.error or "" for record in records[:2]]
    assert all("NUL byte" in error for error in errors), errors
    assert "def average" in records[2].observation.output
