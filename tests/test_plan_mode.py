"""Plan mode on real bwrap, real bash and a real session: the kernel refuses writes to the
repository (EROFS) while /tmp stays writable and tests run; switching back lets writes through;
the file tools refuse either way; without a sandbox only read-only commands run; the model is
told of each switch; `--mode plan` is its own flag, never `--model`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor
from agent_core.events import StepExecuted, UserMessage
from agent_core.executor import Executor
from agent_core.executor.plan import (
    BASH_REFUSED, OFF_NOTE, ON_NOTE, ON_NOTE_UNSANDBOXED, READ_ONLY_NOTE, WRITE_REFUSED,
    read_only_command,
)
from agent_core.executor.sandbox import Plain
from agent_core.plan_mode import set_plan_mode
from agent_core.steps import Approve
from agent_core.trajectory import read_trajectory
from app.args import build_parser
from tests.fixtures.repos import git, tree_state
from tests.test_sandbox import needs_bwrap, sandboxed
from tests.test_session import FIX_SCRIPTS, prompt_text, write_script

# A test that writes a scratch file under the temporary directory (/tmp in the sandbox).
PLAN_TEST = (
    "import tempfile\nimport unittest\nfrom pathlib import Path\n\nfrom calc.ops import add\n\n\n"
    "class AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n"
    "        scratch = Path(tempfile.mkdtemp()) / 'scratch.txt'\n"
    "        scratch.write_text('written under /tmp')\n"
    "        self.assertTrue(str(scratch).startswith('/tmp/'))\n"
    "        self.assertEqual(add(2, 3), 5)\n"
)


@needs_bwrap
def test_plan_mode_mount_refuses_writes_until_switched_back(git_repo: Path) -> None:
    with Executor(git_repo, command_timeout=30, launcher=sandboxed(git_repo)) as executor:
        assert executor.execute(Bash("cd calc && export KEPT=yes")).exit_code == 0
        assert executor.set_plan(True) and executor.plan
        before = tree_state(git_repo)
        for command in ("echo x > f", "touch f", "echo y >> ops.py", "rm ops.py"):
            seen = executor.execute(Bash(command))
            assert seen.exit_code != 0, command
            assert "Read-only file system" in seen.output, (command, seen.output)
            assert READ_ONLY_NOTE in (seen.error or "")
        assert tree_state(git_repo) == before
        # The shell came back in the same directory with its exported variables.
        assert executor.execute(Bash("pwd; echo $KEPT")).output.split() == ["/testbed/calc", "yes"]
        scratch = executor.execute(Bash("echo scratch > /tmp/s && cat /tmp/s"))
        assert (scratch.exit_code, scratch.output.strip()) == (0, "scratch")
        assert "read-only: plan mode" in executor.where
        assert executor.set_plan(False) and not executor.set_plan(False)
        assert executor.execute(Bash("echo x > f && touch g")).exit_code == 0
    assert (git_repo / "calc/f").read_text() == "x\n" and (git_repo / "calc/g").exists()


@needs_bwrap
def test_tests_run_in_plan_mode_writing_only_under_tmp(git_repo: Path) -> None:
    (git_repo / "tests/test_plan.py").write_text(PLAN_TEST)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "a test that writes under tmp_path")
    with Executor(git_repo, command_timeout=120, launcher=sandboxed(git_repo)) as executor:
        executor.set_plan(True)
        ran = executor.execute(Bash(f"{sys.executable} -m unittest tests.test_plan"))
        assert ran.exit_code == 0, ran.output
        assert "Ran 1 test" in ran.output and "OK" in ran.output
    assert git(git_repo, "status", "--porcelain", "--ignored") == ""


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_bwrap)])
def test_file_tools_refuse_writes_in_plan_mode(git_repo: Path, sandbox: bool) -> None:
    launcher = sandboxed(git_repo) if sandbox else Plain(git_repo)
    before = tree_state(git_repo)
    with Executor(git_repo, launcher=launcher) as executor:
        executor.set_plan(True)
        writes = [
            StrReplaceEditor("create", "/testbed/new.py", file_text="x = 1\n"),
            StrReplaceEditor("str_replace", "/testbed/calc/ops.py", old_str="a + b", new_str="b + a"),
            StrReplaceEditor("insert", "/testbed/calc/ops.py", insert_line=1, new_str="# hi"),
            Edit("calc/ops.py", 2, 2, "    return b + a"),
        ]
        for action in writes:
            seen = executor.execute(action)
            assert seen.error == WRITE_REFUSED, action
        assert "def average" in executor.execute(
            StrReplaceEditor("view", "/testbed/calc/ops.py")).output
        assert "def average" in executor.execute(Read("calc/ops.py")).output
        assert "calc/ops.py" in executor.execute(Search("average", "calc")).output
        assert tree_state(git_repo) == before
        executor.set_plan(False)
        assert executor.execute(writes[1]).error is None
    assert "b + a" in (git_repo / "calc/ops.py").read_text()


def test_without_a_sandbox_plan_mode_runs_only_read_only_commands(git_repo: Path) -> None:
    before = tree_state(git_repo)
    with Executor(git_repo, launcher=Plain(git_repo)) as executor:
        executor.set_plan(True)
        for command in ("ls calc", "cat calc/ops.py | grep -n def", "git status && git diff",
                        "cd calc; ls", "find . -name '*.py'"):
            seen = executor.execute(Bash(command))
            assert seen.error is None and seen.exit_code == 0, (command, seen)
        for command in ("echo x > f", "touch f", "ls && rm calc/ops.py", "ls; touch f",
                        "cat README.md | tee f", "find . -delete", "git diff --output=f",
                        "echo $(touch f)", "ls `touch f`", "(touch f)",
                        f"{sys.executable} -m pytest -q", "sed -i s/a/b/ README.md"):
            seen = executor.execute(Bash(command))
            assert seen.error is not None and seen.error.startswith(BASH_REFUSED.split(":")[0]), command
            assert "not run" in seen.error
        assert tree_state(git_repo) == before
        executor.set_plan(False)
        assert executor.execute(Bash("touch f")).exit_code == 0
    assert (git_repo / "calc/f").exists()  # (the shell is in calc since `cd calc; ls`)


def test_read_only_parsing_does_not_widen_across_separators() -> None:
    assert read_only_command("grep -rn average calc && git log -1")
    assert not read_only_command("grep x calc && python -c 'open(\"f\",\"w\")'")
    assert not read_only_command("git status | sh")
    assert not read_only_command("cat x 2>/dev/null")
    assert not read_only_command("git stash")
    assert not read_only_command("")


def test_the_model_is_told_of_each_switch(git_repo: Path, tmp_path: Path) -> None:
    from tests.test_session import make_session

    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    session, recorder, events = make_session(git_repo, script, "text")
    try:
        assert set_plan_mode(session, True) and not set_plan_mode(session, True)
        session.propose()
        assert ON_NOTE_UNSANDBOXED in prompt_text(recorder.prompts[-1])
        session.decide(Approve())
        session.propose()
        session.decide(Approve())
        edit = session.propose()
        assert edit is not None and isinstance(edit.step.action, Edit)
        record = session.decide(Approve())
        assert record is not None and record.observation.error == WRITE_REFUSED
        assert "(len(values) + 1)" in (git_repo / "calc/ops.py").read_text()
        assert set_plan_mode(session, False)
        session.propose()
        said = prompt_text(recorder.prompts[-1])
        assert WRITE_REFUSED in said and said.rindex(OFF_NOTE) > said.rindex(WRITE_REFUSED)
        notes = [e.text for e in events if isinstance(e, UserMessage)]
        assert notes == [ON_NOTE_UNSANDBOXED, OFF_NOTE]
    finally:
        session.close()
    assert ON_NOTE != ON_NOTE_UNSANDBOXED


def test_mode_plan_is_its_own_flag_never_a_prefix_of_model() -> None:
    args = build_parser().parse_args(["--mode", "plan", "repo"])
    assert (args.mode, args.model) == ("plan", None)
    assert build_parser().parse_args(["repo"]).mode is None  # (normal, or as a resumed one was)
    assert build_parser().parse_args(["--model", "plan"]).mode is None
    done = subprocess.run([sys.executable, "-m", "app.cli", "--mod", "plan", "--auto"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "unrecognized arguments: --mod" in done.stderr


def test_auto_mode_plan_changes_no_file(git_repo: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "--auto", "--json", "--mode", "plan", "--sandbox", "off",
         "--script", str(script), "--issue", "average is off by one", str(git_repo)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    told = [e["text"] for e in events if e["type"] == "UserMessage"]
    assert told == [ON_NOTE_UNSANDBOXED]
    started = next(e for e in events if e["type"] == "SessionStarted")
    assert started["config"]["sandbox"] == "no sandbox, plan mode: only read-only commands run"
    executed = [e["record"] for e in events if e["type"] == "StepExecuted"]
    assert [r["observation"]["error"] for r in executed if r["action"]["kind"] == "edit"] == [
        WRITE_REFUSED]
    assert git(git_repo, "status", "--porcelain") == ""


def test_a_resumed_session_keeps_its_mode_unless_told(git_repo: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    common = ["--auto", "--sandbox", "off", "--script", str(script)]

    def run(*argv: str) -> int:
        done = subprocess.run([sys.executable, "-m", "app.cli", *common, *argv, str(git_repo)],
                              capture_output=True, text=True, timeout=120)
        return done.returncode

    assert run("--mode", "plan", "--max-steps", "2", "--issue", "average is off by one") == 2
    (log,) = (git_repo / ".git/navtui/sessions").glob("*.jsonl")
    assert run("--resume", log.stem, "--max-steps", "3") == 2  # the edit: refused, still plan
    assert "(len(values) + 1)" in (git_repo / "calc/ops.py").read_text()
    assert run("--resume", log.stem, "--mode", "normal", "--max-steps", "10") == 0
    events = read_trajectory(log).events
    assert [e.text for e in events if isinstance(e, UserMessage)] == [
        ON_NOTE_UNSANDBOXED, ON_NOTE_UNSANDBOXED, OFF_NOTE]
    edit = next(e.record for e in events if isinstance(e, StepExecuted) and e.record.index == 3)
    assert edit.observation.error == WRITE_REFUSED
