"""The `navtui` command line as a subprocess: flags, exit codes, transcript, --json, --plain."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.repos import git
from tests.test_session import BUGGY_LINE, FIX_SCRIPTS, FIXED_LINE, GARBAGE, write_script

ISSUE = "average([2, 4, 6]) returns 3 instead of 4"


def navtui(*args: str, stdin: str = "", env: dict[str, str] | None = None, cwd: Path | None = None):
    """Run `navtui ARGS` the way a user would (a fresh process, no terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120", **(env or {})},
        cwd=cwd,
    )


def test_help_lists_the_whole_contract():
    result = navtui("--help")
    assert result.returncode == 0
    for flag in (
        "--auto", "--backend", "--model", "--adapter", "--load-in-4bit", "--load-in-8bit",
        "--base-url", "--api-key", "--script", "--dialect", "--issue", "--issue-file",
        "--max-steps", "--max-time", "--command-timeout", "--patch-out", "--trajectory",
        "--json", "--plain", "--resume", "REPO",
    ):
        assert flag in result.stdout, flag


def test_auto_fixes_the_bug_exit_0(git_repo, tmp_path):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    patch = tmp_path / "out.patch"
    result = navtui("--auto", "--script", str(script), "--issue", ISSUE, "--patch-out", str(patch), str(git_repo))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Step 1" in out and "Step 5" in out
    assert "The divisor is off by one." in out  # thought
    assert "edit calc/ops.py lines 7-7" in out  # action as it runs
    assert "4.0" in out  # observation
    assert "Final diff" in out and f"+{FIXED_LINE}" in out
    assert "finished: submitted" in out
    assert git(git_repo, "status", "--porcelain").strip() == "M calc/ops.py"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(git_repo), str(clone)], check=True)
    git(clone, "apply", "--check", str(patch))
    logs = list((git_repo / ".git/navtui/sessions").glob("*.jsonl"))
    assert len(logs) == 1 and "SessionFinished" in logs[0].read_text()


def test_json_prints_one_event_per_line(git_repo, tmp_path):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["xml"])
    trajectory = tmp_path / "log.jsonl"
    result = navtui(
        "--auto", "--json", "--script", str(script), "--issue", ISSUE, "--trajectory", str(trajectory), str(git_repo)
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "SessionStarted" and types[-1] == "SessionFinished"
    assert types.count("StepExecuted") == 4 and "TokenStreamed" in types and "UsageReported" in types
    assert events[0]["config"]["dialect"] == "xml"
    assert events[-1]["reason"] == "submitted" and f"+{FIXED_LINE}" in events[-1]["patch"]
    assert trajectory.is_file() and "SessionStarted" in trajectory.read_text()


@pytest.mark.parametrize(
    ("outputs", "flags", "reason"),
    [
        (["Thought: a\nAction: bash true"], [], "script_exhausted"),
        (["Thought: a\nAction: bash true"] * 5, ["--max-steps", "2"], "limit"),
        ([f"{GARBAGE} ({n})" for n in range(4)], [], "format_errors"),
    ],
    ids=["script-exhausted", "max-steps", "format-errors"],
)
def test_stopped_sessions_exit_2(git_repo, tmp_path, outputs, flags, reason):
    script = write_script(tmp_path / "s.jsonl", outputs)
    result = navtui("--auto", "--json", "--script", str(script), "--dialect", "text", "--issue", ISSUE, *flags, str(git_repo))
    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["reason"] == reason


def test_max_time_exits_2(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", ["Thought: wait\nAction: bash sleep 3", "Thought: x\nAction: submit"])
    result = navtui("--auto", "--script", str(script), "--issue", ISSUE, "--max-time", "1", str(git_repo))
    assert result.returncode == 2, result.stderr
    assert "--max-time" in result.stdout


def test_command_timeout_is_applied(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", ["Thought: wait\nAction: bash sleep 30"])
    result = navtui("--auto", "--json", "--script", str(script), "--issue", ISSUE, "--command-timeout", "1", str(git_repo))
    assert result.returncode == 2
    executed = [json.loads(l) for l in result.stdout.splitlines() if '"StepExecuted"' in l]
    observation = executed[0]["record"]["observation"]
    assert "timed out" in (observation["output"] + (observation["error"] or "")).lower()


def test_plain_reject_edit_quit_exit_3(git_repo, tmp_path):
    script = write_script(
        tmp_path / "s.jsonl",
        ["Thought: delete\nAction: bash rm -rf calc", "Thought: again\nAction: bash rm -rf calc",
         "Thought: once more\nAction: bash rm -rf calc"],
    )
    answers = "r\nplease do not delete code\ne\nAction: bash echo edited > edited.txt\n.\nq\n"
    result = navtui("--plain", "--script", str(script), "--issue", ISSUE, str(git_repo), stdin=answers)
    assert result.returncode == 3, result.stderr
    assert (git_repo / "calc/ops.py").exists()
    assert (git_repo / "edited.txt").read_text() == "edited\n"
    assert "rejected: please do not delete code" in result.stdout
    assert "finished: quit" in result.stdout


def test_plain_eof_on_stdin_quits(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", ["Thought: a\nAction: bash touch x.txt"])
    result = navtui("--plain", "--script", str(script), "--issue", ISSUE, str(git_repo), stdin="")
    assert result.returncode == 3
    assert not (git_repo / "x.txt").exists()


def test_plain_reads_the_issue_from_stdin(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", ["Thought: done\nAction: submit"])
    result = navtui("--plain", "--json", "--script", str(script), str(git_repo), stdin="the issue text\n\na\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0])["issue"] == "the issue text"


def shadow_without_bitsandbytes(tmp_path: Path) -> dict[str, str]:
    """An environment in which `import bitsandbytes` fails, as on a machine without it."""
    shadow = tmp_path / "shadow" / "bitsandbytes"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('bitsandbytes is not installed')\n")
    return {"PYTHONPATH": os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("not-a-repo", "not a git repo"),
        ("missing-model", "no such file or directory"),
        ("missing-script", "replay script not found"),
        ("both-issues", "not allowed with argument"),
        ("no-issue", "--auto needs the issue"),
        ("no-tty", "needs a terminal"),
        ("missing-issue-file", "cannot read --issue-file"),
        ("4bit-8bit", "not allowed with argument"),
        ("auto-and-plain", "choose one of --auto"),
        ("json-without-auto", "--json prints events for --auto or --plain"),
    ],
)
def test_bad_input_exits_1_with_a_clear_message(case, expected, git_repo, tmp_path):
    script = str(write_script(tmp_path / "s.jsonl", ["Thought: x\nAction: submit"]))
    plain = tmp_path / "plain"
    plain.mkdir()
    issue_file = tmp_path / "issue.md"
    issue_file.write_text(ISSUE)
    repo = str(git_repo)
    args = {
        "not-a-repo": ["--auto", "--script", script, "--issue", ISSUE, str(plain)],
        "missing-model": ["--auto", "--model", str(tmp_path / "no-model"), "--issue", ISSUE, repo],
        "missing-script": ["--auto", "--script", str(tmp_path / "nope.jsonl"), "--issue", ISSUE, repo],
        "both-issues": ["--auto", "--script", script, "--issue", ISSUE, "--issue-file", str(issue_file), repo],
        "no-issue": ["--auto", "--script", script, repo],
        "no-tty": ["--script", script, "--issue", ISSUE, repo],
        "missing-issue-file": ["--auto", "--script", script, "--issue-file", str(tmp_path / "x.md"), repo],
        "4bit-8bit": ["--auto", "--model", "m", "--load-in-4bit", "--load-in-8bit", "--issue", ISSUE, repo],
        "auto-and-plain": ["--auto", "--plain", "--script", script, "--issue", ISSUE, repo],
        "json-without-auto": ["--json", "--script", script, "--issue", ISSUE, repo],
    }[case]
    result = navtui(*args)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert expected in result.stderr.lower() or expected in result.stderr
    assert "Traceback" not in result.stderr
    assert git(git_repo, "status", "--porcelain") == ""


def test_4bit_without_bitsandbytes_exits_1(git_repo, tmp_path):
    model_dir = tmp_path / "model"  # (a folder that looks like a model: no weights load)
    model_dir.mkdir()
    (model_dir / "config.json").write_text('{"model_type": "qwen3"}')
    (model_dir / "model.safetensors").write_bytes(b"")
    result = navtui(
        "--auto", "--model", str(model_dir), "--load-in-4bit", "--issue", ISSUE, str(git_repo),
        env=shadow_without_bitsandbytes(tmp_path),
    )
    assert result.returncode == 1, result.stderr
    assert "--load-in-4bit needs bitsandbytes" in result.stderr
    assert "pip install" in result.stderr and "Traceback" not in result.stderr


def test_server_down_exits_1(git_repo):
    result = navtui(
        "--auto", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "tiny",
        "--issue", ISSUE, str(git_repo),
    )
    assert result.returncode == 1
    assert "127.0.0.1:9" in result.stdout + result.stderr


def test_subcommands_dispatch(git_repo, tmp_path):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["toolcall"])
    assert navtui("--auto", "--script", str(script), "--issue", ISSUE, str(git_repo)).returncode == 0
    listed = navtui("sessions", "--json", str(git_repo))
    assert listed.returncode == 0, listed.stderr
    session = json.loads(listed.stdout.splitlines()[0])
    assert session["status"] == "submitted" and session["issue"].startswith("average")
    exported = navtui("export", session["id"], "--format", "swebench", "--repo", str(git_repo))
    assert exported.returncode == 0, exported.stderr
    prediction = json.loads(exported.stdout)
    assert f"-{BUGGY_LINE}" in prediction["model_patch"]
    positional = navtui("export", session["id"], "--format", "swebench", str(git_repo), cwd=tmp_path)
    assert positional.returncode == 0, positional.stderr
    assert json.loads(positional.stdout) == prediction


def test_quit_then_resume_with_the_logged_backend(git_repo, tmp_path):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    first = navtui("--plain", "--json", "--script", str(script), "--issue", ISSUE, str(git_repo), stdin="a\na\nq\n")
    assert first.returncode == 3, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]

    resumed = navtui("--auto", "--json", "--resume", session_id, str(git_repo), cwd=tmp_path)

    assert resumed.returncode == 0, resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert events[0]["session_id"] == session_id
    assert [e["record"]["index"] for e in events if e["type"] == "StepExecuted"] == [3, 4, 5]
    assert events[-1]["reason"] == "submitted"
    assert FIXED_LINE in (git_repo / "calc/ops.py").read_text()
