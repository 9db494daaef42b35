"""The log a real `navtui --auto` run leaves: where it is, what it holds, what it never holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_core.events import SessionFinished, SessionStarted, StepExecuted, StepProposed
from agent_core.trajectory import read_trajectory
from tests.fixtures.repos import git
from tests.test_session import FIX_SCRIPTS, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")


def test_auto_run_logs_inside_git_dir_without_the_api_key(git_repo: Path, tmp_path: Path):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["toolcall"])
    secret = "sk-test-0123456789abcdef"
    run = subprocess.run(
        [NAVTUI, "--auto", "--backend", "replay", "--script", str(script), "--api-key", secret,
         "--issue", "average is off by one", str(git_repo)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr

    [log] = (git_repo / ".git" / "navtui" / "sessions").glob("*.jsonl")
    assert secret not in log.read_text()
    assert git(git_repo, "status", "--porcelain").strip() == "M calc/ops.py"  # log not in tree
    trajectory = read_trajectory(log)
    kinds = [type(e) for e in trajectory.events]
    assert kinds[0] is SessionStarted and kinds[-1] is SessionFinished
    assert trajectory.config["dialect"] == "toolcall"
    assert trajectory.config["backend_info"]["backend"] == "replay"
    proposals = [e.step.raw for e in trajectory.events if isinstance(e, StepProposed)]
    assert proposals == FIX_SCRIPTS["toolcall"]  # every raw model output, whole
    records = [e.record for e in trajectory.events if isinstance(e, StepExecuted)]
    assert all(r.checkpoint and r.checkpoint.ref.startswith("refs/navtui/") for r in records)
    assert all(git(git_repo, "rev-parse", r.checkpoint.ref).strip() == r.checkpoint.commit
               for r in records)

    custom = tmp_path / "elsewhere" / "log.jsonl"
    again = subprocess.run(
        [NAVTUI, "--auto", "--script", str(script), "--trajectory", str(custom),
         "--issue", "average is off by one", str(git_repo)],
        capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert read_trajectory(custom).finished.reason == "submitted"
