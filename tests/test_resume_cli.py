"""`kill -9` a real `navtui --auto` mid-step, list it with `navtui sessions`, then `--resume` it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_core.events import Notice, StepExecuted
from agent_core.trajectory import read_trajectory
from tests.fixtures.repos import git
from tests.test_session import FIXED_LINE, PYTEST, repo_tests_pass, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")


def navtui(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVTUI, *args], capture_output=True, text=True, timeout=timeout)


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the session to get there"
        time.sleep(0.05)


def test_kill_9_mid_step_then_resume_finishes_without_losing_a_step(git_repo: Path,
                                                                    tmp_path: Path):
    mark = tmp_path / "step3-started"  # outside the repo: survives the restore
    outputs = [
        "Thought: Read the module.\nAction: read calc/ops.py",
        f"Thought: The divisor is off by one.\nAction: edit calc/ops.py 7 7\n{FIXED_LINE}",
        # Killed while this runs: the tree is left half-changed. On the re-run it does nothing.
        "Thought: Try something.\nAction: bash "
        f"if [ ! -e {mark} ]; then touch {mark}; echo junk >> calc/ops.py; "
        "echo wip > wip.txt; sleep 5; fi",
        f"Thought: Run the tests.\nAction: bash {PYTEST}",
        "Thought: Done.\nAction: submit",
    ]
    script = write_script(tmp_path / "script.jsonl", outputs)
    first = subprocess.Popen(
        [NAVTUI, "--auto", "--script", str(script), "--issue", "average is off by one",
         str(git_repo)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for(lambda: (git_repo / "wip.txt").exists() or first.poll() is not None)
        assert first.poll() is None, first.stderr.read()
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    assert "junk" in (git_repo / "calc/ops.py").read_text()

    listed = navtui("sessions", "--json", str(git_repo))
    assert listed.returncode == 0, listed.stderr
    [session] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (session["status"], session["steps"]) == ("interrupted", 2)
    assert session["issue"] == "average is off by one"

    resumed = navtui("--auto", "--script", str(script), "--resume", session["id"][:15],
                     str(git_repo))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    printed = " ".join(resumed.stdout.split())
    assert "resumed session" in printed and "restored it to checkpoint 2" in printed

    text = (git_repo / "calc/ops.py").read_text()
    assert FIXED_LINE in text and "junk" not in text
    assert not (git_repo / "wip.txt").exists()
    assert repo_tests_pass(git_repo)
    log = read_trajectory(Path(session["path"]))
    notices = [e.message for e in log.events if isinstance(e, Notice)]
    assert any("restored it to checkpoint 2" in n and "calc/ops.py" in n for n in notices)
    executed = [e.record for e in log.events if isinstance(e, StepExecuted)]
    assert [r.index for r in executed] == [1, 2, 3, 4, 5]
    assert executed[0].proposed.raw == outputs[0] and executed[-1].action.kind == "submit"
    assert log.finished.reason == "submitted" and len(log.writer_pids) == 2
    assert git(git_repo, "status", "--porcelain").strip() == "M calc/ops.py"

    again = navtui("sessions", "--json", str(git_repo))
    assert json.loads(again.stdout)["status"] == "submitted"
    assert navtui("--auto", "--script", str(script), "--resume", session["id"],
                  str(git_repo)).returncode == 1
