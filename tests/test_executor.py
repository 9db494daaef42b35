"""Executor: prepare (what will run, the diff it will make) and execute on a real repo."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.executor import Executor, Prepared
from tests.fixtures.repos import git


@pytest.fixture
def executor(git_repo: Path):
    with Executor(git_repo, command_timeout=5, output_limit=3_000) as ex:
        yield ex


def test_prepare_describes_without_changing_anything(executor: Executor, git_repo: Path):
    actions = [
        Edit("calc/ops.py", 7, 7, "    return sum(values) / len(values)"),
        StrReplaceEditor("str_replace", "/testbed/calc/ops.py", old_str="a + b", new_str="b + a"),
        StrReplaceEditor("insert", "README.md", insert_line=1, new_str="x"),
        StrReplaceEditor("create", "new.py", file_text="N = 1\n"),
        Bash("rm -rf calc"),
    ]
    prepared = [executor.prepare(a) for a in actions]
    assert git(git_repo, "status", "--porcelain") == ""
    assert [p.command_shown for p in prepared] == [
        "edit calc/ops.py lines 7-7",
        "str_replace_editor str_replace calc/ops.py",
        "str_replace_editor insert README.md",
        "str_replace_editor create new.py",
        "rm -rf calc",
    ]
    assert "+    return sum(values) / len(values)" in prepared[0].preview_diff
    assert "-    return a + b\n+    return b + a" in prepared[1].preview_diff
    assert prepared[3].preview_diff == "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+N = 1\n"
    assert prepared[4].preview_diff is None


def test_no_preview_for_read_only_actions_and_submit(executor: Executor):
    for action, shown in [
        (Read("calc/ops.py"), "read calc/ops.py"),
        (Search("average"), "grep -rn 'average' ."),
        (Search("x", "/testbed/calc"), "grep -rn 'x' calc"),
        (StrReplaceEditor("view", "calc/ops.py", view_range=[1, 3]),
         "str_replace_editor view calc/ops.py [1, 3]"),
        (Submit(), "submit"),
    ]:
        assert executor.prepare(action) == Prepared(action, shown, None)


def test_preview_matches_what_execute_does(executor: Executor, git_repo: Path):
    action = StrReplaceEditor("str_replace", "calc/ops.py", old_str="(len(values) + 1)",
                              new_str="len(values)")
    preview = executor.prepare(action).preview_diff
    obs = executor.execute(action)
    assert obs.error is None
    changed = [l for l in git(git_repo, "diff", "calc/ops.py").splitlines() if l[:1] in "+-"]
    assert changed == [l for l in preview.splitlines() if l[:1] in "+-"]
    undo = executor.prepare(StrReplaceEditor("undo_edit", "calc/ops.py")).preview_diff
    assert "-    return sum(values) / len(values)" in undo


def test_model_mistakes_are_observations_never_exceptions(executor: Executor):
    mistakes = [
        Read("../../etc/passwd"), Read("missing.py"), Read(""),
        Edit("calc/ops.py", 40, 41, "x"),
        StrReplaceEditor("str_replace", "calc/ops.py", old_str="return"),
        StrReplaceEditor("view", "calc/ops.py", view_range=[9, 1]),
        StrReplaceEditor("insert", "calc/ops.py", insert_line=-3, new_str="x"),
        StrReplaceEditor("undo_edit", "README.md"),
        StrReplaceEditor("bogus", "README.md"),
        Search("[", "calc"),
    ]
    for action in mistakes:
        obs = executor.execute(action)
        assert obs.error, action


def test_bash_timeout_is_an_observation(git_repo: Path):
    with Executor(git_repo, command_timeout=1) as ex:
        obs = ex.execute(Bash("sleep 1000"))
        assert "timed out after 1 s" in obs.error
        assert ex.execute(Bash("echo next")).output == "next\n"


def test_submit_says_the_session_is_submitted(executor: Executor):
    obs = executor.execute(Submit())
    assert obs.error is None and "submitted" in obs.output.lower()


def test_user_commands_share_the_model_shell(executor: Executor, git_repo: Path):
    executor.execute(Bash("cd calc && export FROM_MODEL=yes"))
    obs = executor.run_user_command("pwd; echo $FROM_MODEL")
    assert obs.output == f"{git_repo / 'calc'}\nyes\n"


def test_user_commands_keep_testbed_literal(executor: Executor):
    assert executor.run_user_command("echo /testbed").output == "/testbed\n"
    assert executor.execute(Bash("echo /testbed")).output == f"{executor.root}\n"


def test_bash_edits_are_visible_to_file_tools(executor: Executor):
    executor.execute(Bash("printf 'one\\ntwo\\n' > /testbed/made.txt"))
    assert executor.execute(Read("made.txt")).output == "     1\tone\n     2\ttwo\n"


def test_output_limit_applies_to_bash_and_read(executor: Executor, git_repo: Path):
    assert executor.execute(Bash("seq 1 50000")).truncated
    (git_repo / "long.txt").write_text(("z" * 100 + "\n") * 500)
    assert "[showing lines 1-" in executor.execute(Read("long.txt")).output


def test_interrupt_stops_a_running_command(executor: Executor):
    executor.interrupt()  # nothing running, no shell yet: a no-op
    threading.Timer(0.3, executor.interrupt).start()
    obs = executor.execute(Bash("sleep 1000"))
    assert "interrupted" in obs.error
    assert executor.execute(Bash("echo after")).output == "after\n"


def test_close_kills_background_processes(git_repo: Path):
    ex = Executor(git_repo)
    pid = int(ex.execute(Bash("sleep 1000 >/dev/null 2>&1 & echo $!")).output)
    ex.close()
    assert _gone(pid)
    ex.close()


def _gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False
