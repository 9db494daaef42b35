"""`navtui REPO` in a real pseudo-terminal opens the Textual app on the CLI-built session."""

from __future__ import annotations

import os
import sys

import pexpect

from tests.test_session import write_script


def spawn_navtui(*args: str, cwd) -> pexpect.spawn:
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    return pexpect.spawn(
        sys.executable, ["-m", "app.cli", *args], cwd=str(cwd), env=env, dimensions=(40, 120), timeout=90
    )


def test_app_runs_approved_commands_and_exits_0_on_submit(git_repo, tmp_path):
    script = write_script(
        tmp_path / "s.jsonl",
        ["Thought: make a note\nAction: bash echo hi > note.txt", "Thought: done\nAction: submit"],
    )
    child = spawn_navtui("--script", str(script), "--issue", "write a note", str(git_repo), cwd=tmp_path)
    try:
        child.expect("note.txt")
        child.expect("Approve")
        child.send("a")
        child.expect("submit")
        child.expect("Approve")
        child.send("a")
        child.expect("Keep")
        child.send("k")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert (git_repo / "note.txt").read_text() == "hi\n"


def test_app_quit_exits_3(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash touch x.txt"])
    child = spawn_navtui("--script", str(script), "--issue", "look around", str(git_repo), cwd=tmp_path)
    try:
        child.expect("Approve")
        child.send("q")
        child.expect("Quit")
        child.send("y")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 3
    assert not (git_repo / "x.txt").exists()


def test_demo_subcommand_opens_the_app(tmp_path):
    child = spawn_navtui("demo", "--fast", "--dir", str(tmp_path / "demo"), cwd=tmp_path)
    try:
        child.expect("Approve")
        child.send("q")
        child.expect("Quit")
        child.send("y")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 3
    assert (tmp_path / "demo" / ".git").is_dir()


def test_resume_without_backend_flags_uses_the_logged_backend_and_writes_patch_out(git_repo,
                                                                                  tmp_path):
    import json
    import subprocess

    from tests.test_session import FIX_SCRIPTS, FIXED_LINE

    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    first = subprocess.run(
        [sys.executable, "-m", "app.cli", "--plain", "--json", "--script", str(script),
         "--issue", "fix average", str(git_repo)],
        input="a\na\nq\n", capture_output=True, text=True, timeout=120,
    )
    assert first.returncode == 3, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    patch = tmp_path / "out.patch"

    # No --script / --backend / --model: the replay script the log names is used again.
    child = spawn_navtui("--resume", session_id, "--patch-out", str(patch), str(git_repo),
                         cwd=tmp_path)
    try:
        for thought in ("divisor is off", "Check it", "tests pass"):  # edit, check, submit
            child.expect(thought)
            child.expect("Approve")
            child.send("a")
        child.expect("Keep")
        child.send("k")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert FIXED_LINE in (git_repo / "calc/ops.py").read_text()
    assert f"+{FIXED_LINE}" in patch.read_text()
