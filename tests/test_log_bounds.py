"""The session log is bounded: huge strings (a created file, a diff) are logged as head + tail
with their size and hash, the whole stays in the checkpoints, and past a budget every string is
cut short."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agent_core.actions import Bash, StrReplaceEditor
from agent_core.events import Notice, SessionFinished, StepProposed
from agent_core.steps import ProposedStep
from agent_core.trajectory import (
    FIELD_LIMIT,
    SMALL_FIELD_LIMIT,
    TrajectoryWriter,
    read_trajectory,
    was_cut,
)
from tests.fixtures.repos import git
from tests.test_cli import navtui
from tests.test_session import write_script


def test_a_huge_string_is_logged_as_head_tail_size_and_hash(tmp_path: Path):
    huge = "".join(f"line {n}\n" for n in range(400_000))  # about 4.5 MB
    path = tmp_path / "log.jsonl"
    writer = TrajectoryWriter(path, field_limit=64 * 1024)
    writer(StepProposed(1, ProposedStep("short thought", Bash("ls"), huge, "text"), "ls"))
    writer.close()
    assert path.stat().st_size < 80 * 1024
    step = read_trajectory(path).events[0].step
    assert step.thought == "short thought" and not was_cut(step.thought)
    assert was_cut(step.raw)
    assert step.raw.startswith("line 0\n") and step.raw.endswith("line 399999\n")
    assert f"{len(huge)} characters" in step.raw
    assert hashlib.sha256(huge.encode()).hexdigest() in step.raw


def test_past_the_budget_every_string_is_cut_short(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    budget = 200 * 1024
    writer = TrajectoryWriter(path, field_limit=50 * 1024, budget=budget)
    for n in range(100):
        writer(Notice(f"{n} " + "y" * 40_000))
    writer.close()
    notices = read_trajectory(path).events
    assert len(notices) == 100 and notices[99].message.startswith("99 ")
    assert path.stat().st_size < budget + 50 * 1024 + 100 * (SMALL_FIELD_LIMIT + 400)
    assert not was_cut(notices[0].message) and was_cut(notices[99].message)


def test_a_huge_create_keeps_the_log_small_and_the_file_whole(git_repo: Path, tmp_path: Path):
    text = "".join(f"row {n:07d} of the generated file\n" for n in range(130_000))  # ~4 MB
    call = json.dumps({"name": "str_replace_editor", "arguments": {
        "command": "create", "path": "/testbed/big.txt", "file_text": text}})
    script = write_script(tmp_path / "s.jsonl", [f"<tool_call>\n{call}\n</tool_call>"])
    # One step: the next prompt would not fit the context window anyway (the reply is in it).
    result = navtui("--auto", "--max-steps", "1", "--dialect", "toolcall", "--script", str(script),
                    "--issue", "x", str(git_repo))
    assert result.returncode == 2, result.stderr
    assert (git_repo / "big.txt").read_text() == text
    (log,) = (git_repo / ".git/navtui/sessions").glob("*.jsonl")
    # Before the bound this log held ~9 copies of the file (~37 MB).
    assert log.stat().st_size < len(text) and log.stat().st_size < 12 * FIELD_LIMIT
    trajectory = read_trajectory(log)
    assert was_cut(trajectory.finished.patch)
    # The whole file is in the checkpoint, and the export goes back to it for the patch.
    (executed,) = [e.record for e in trajectory.events if type(e).__name__ == "StepExecuted"
                   and isinstance(e.record.action, StrReplaceEditor)]
    assert git(git_repo, "show", f"{executed.checkpoint.commit}:big.txt") == text
    exported = navtui("export", trajectory.session_id, "--format", "swebench", "--repo",
                      str(git_repo))
    assert exported.returncode == 0, exported.stderr
    patch = json.loads(exported.stdout)["model_patch"]
    assert "+row 0000000 of" in patch and "+row 0129999 of" in patch and not was_cut(patch)


def test_finished_patches_under_the_limit_are_kept_whole(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    writer = TrajectoryWriter(path)
    patch = "diff --git a/x b/x\n" + "+ok\n" * 1000
    writer(SessionFinished("submitted", "done", patch))
    writer.close()
    assert read_trajectory(path).finished.patch == patch
