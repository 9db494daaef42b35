"""What users of other terminal agents expect of the command line: plain `navtui` in a
repository, a way back after every exit, `--resume last`, real subcommands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.test_session import write_script


def navtui(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120)


def look_script(tmp_path: Path) -> Path:
    return write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash ls",
                                              "Thought: more\nAction: bash pwd"])


def test_plain_navtui_works_on_the_repository_containing_the_current_directory(git_repo, tmp_path):
    inside = git_repo / "calc"
    done = navtui("--plain", "--script", str(look_script(tmp_path)), "--issue", "look", cwd=inside,
                  stdin="q\n")
    assert done.returncode == 3, done.stderr
    assert "Step 1" in done.stdout


def test_outside_a_repository_the_error_names_navtui_path(tmp_path):
    outside = tmp_path / "nowhere"
    outside.mkdir()
    done = navtui("--plain", "--script", str(look_script(tmp_path)), "--issue", "x", cwd=outside)
    assert done.returncode == 1
    assert "not inside a git repository" in done.stderr and "navtui PATH" in done.stderr


@pytest.mark.parametrize("mode", [("--plain",), ("--auto",)])
def test_every_headless_exit_prints_the_resume_command(git_repo, tmp_path, mode):
    done = navtui(*mode, "--max-steps", "1", "--script", str(look_script(tmp_path)),
                  "--issue", "look", str(git_repo), cwd=tmp_path, stdin="q\n")
    assert done.returncode in (2, 3), done.stderr
    session_id = (git_repo / ".git/navtui/sessions").glob("*.jsonl").__next__().stem
    assert f"navtui --resume {session_id} {git_repo}" in done.stderr


def test_resume_last_continues_the_newest_session_of_the_repo(git_repo, tmp_path):
    script = look_script(tmp_path)
    first = navtui("--plain", "--json", "--script", str(script), "--issue", "look", str(git_repo),
                   cwd=tmp_path, stdin="q\n")
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    again = navtui("--plain", "--json", "--resume", "last", cwd=git_repo, stdin="a\nq\n")
    assert again.returncode == 3, again.stderr
    assert json.loads(again.stdout.splitlines()[0])["session_id"] == session_id
    assert f"navtui --resume {session_id} {git_repo}" in again.stderr


def test_resume_last_without_sessions_says_so(git_repo, tmp_path):
    done = navtui("--plain", "--resume", "last", cwd=git_repo)
    assert done.returncode == 1 and "no navtui session" in done.stderr


@pytest.mark.parametrize("argv", [("doctr",), ("sesions", "."), ("--auto", "doctr")])
def test_a_mistyped_subcommand_is_answered_with_did_you_mean(tmp_path, argv):
    done = navtui(*argv, cwd=tmp_path)
    assert done.returncode == 1
    meant = "sessions" if "sesions" in argv else "doctor"
    assert f"did you mean `navtui {meant}`?" in done.stderr
    assert "terminal" not in done.stderr and "does not exist" not in done.stderr
    assert "unrecognized arguments" not in done.stderr


def test_help_lists_every_subcommand_and_each_has_its_own_help(tmp_path):
    from app.commands import SUBCOMMANDS

    listed = navtui("--help", cwd=tmp_path).stdout
    for name in SUBCOMMANDS:
        assert f"navtui {name}" in listed
        own = navtui(name, "--help", cwd=tmp_path)
        assert own.returncode == 0 and own.stdout.startswith(f"usage: navtui {name}"), name


def test_a_kept_demo_session_resumes_with_the_command_it_prints(tmp_path):
    import re

    from tests.test_cli_tui import spawn_navtui

    child = spawn_navtui("demo", "--fast", "--keep", cwd=tmp_path)
    try:
        child.expect("Approve")
        child.send("q")
        child.expect("Quit")
        child.send("y")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    said = child.before.decode(errors="replace")
    found = re.search(r"navtui --resume ([\w-]+) (/[^\s\x1b]+)", said)
    assert child.exitstatus == 3 and found, said
    child = spawn_navtui("--resume", found.group(1), found.group(2), cwd=tmp_path)
    try:
        child.expect("Approve")
        child.send("q")
        child.expect("Quit")
        child.send("y")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 3, child.before
    assert "unknown backend" not in child.before.decode(errors="replace")
    import shutil

    shutil.rmtree(Path(found.group(2)).parent, ignore_errors=True)
