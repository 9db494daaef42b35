"""One session per repository (a pid lock), and what a `kill -9` leaves behind does not block resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.git.process.lock import SessionLocked
from agent_core.workspace import Workspace
from tests.test_resume_cli import NAVTUI, wait_for
from tests.test_session import write_script

HOLDER = """
import sys, time
from agent_core.workspace import Workspace
ws = Workspace.open(sys.argv[1])
ws.begin("first")
if len(sys.argv) > 2:  # killed mid-checkpoint: git's lock on the private index stays behind
    open(ws.state_dir / "checkpoints" / "first.index.lock", "w").close()
print("ready", flush=True)
time.sleep(120)
"""


def hold(repo: Path, *extra: str) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo), *extra],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


def kill(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


def test_a_second_session_is_refused_naming_the_first_until_it_is_gone(git_repo: Path):
    child = hold(git_repo)
    try:
        with pytest.raises(SessionLocked) as refused:
            Workspace.open(git_repo).begin("second")
        message = str(refused.value)
        assert "session first" in message and f"process {child.pid}" in message
        assert "Finish or quit it first" in message
    finally:
        kill(child)
    ws = Workspace.open(git_repo)
    ws.begin("second")  # the holder died: its lock is stale
    (git_repo / "x.txt").write_text("x\n")
    assert ws.checkpoint(1).index == 1
    ws.close()
    assert not (ws.state_dir / "lock").exists()


def test_resume_after_kill_9_mid_checkpoint_clears_the_stale_index_lock(git_repo: Path):
    kill(hold(git_repo, "leave-index-lock"))
    ws = Workspace.open(git_repo)
    ws.attach("first")
    (git_repo / "x.txt").write_text("x\n")
    ws.checkpoint(1)
    assert ws.changed_files(0) == ["x.txt"]


def test_navtui_refuses_a_second_session_on_the_same_repo(git_repo: Path, tmp_path: Path):
    started = git_repo / "started.mark"  # in the repo: the sandbox's /tmp is its own
    first_script = write_script(tmp_path / "a.jsonl", [
        "Thought: Wait.\nAction: bash touch started.mark; sleep 20",
        "Thought: Done.\nAction: submit",
    ])
    second_script = write_script(tmp_path / "b.jsonl", [
        "Thought: Change it.\nAction: bash echo b > b.txt", "Thought: Done.\nAction: submit",
    ])
    first = subprocess.Popen(
        [NAVTUI, "--auto", "--sandbox", "off", "--script", str(first_script), "--issue", "one", str(git_repo)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: started.exists() or first.poll() is not None)
        second = subprocess.run(
            [NAVTUI, "--auto", "--script", str(second_script), "--issue", "two", str(git_repo)],
            capture_output=True, text=True, timeout=120,
        )
    finally:
        first.kill()
        first.wait(timeout=30)
    assert second.returncode != 0
    assert "another navtui session is working on" in second.stderr
    assert f"process {first.pid}" in second.stderr
    assert not (git_repo / "b.txt").exists()
