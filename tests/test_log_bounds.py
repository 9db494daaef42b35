"""The session log is bounded: huge strings (a created file, a diff) are logged as head + tail
with their size and hash, the whole stays in the checkpoints, and past a budget every string is
cut short."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agent_core.actions import Bash
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


def test_a_huge_new_file_keeps_the_log_small_and_the_file_whole(git_repo: Path, tmp_path: Path):
    """The model writes a ~4 MB file; its step diff and the session's patch would each hold it."""
    command = "seq -f '%09g: a line of a generated file' 1 130000 > big.txt"
    script = write_script(tmp_path / "s.jsonl", [f"Thought: make it\nAction: bash {command}"])
    result = navtui("--auto", "--max-steps", "1", "--script", str(script), "--issue", "x",
                    str(git_repo))
    assert result.returncode == 2, result.stderr  # stopped by --max-steps, with its patch
    size = (git_repo / "big.txt").stat().st_size
    assert size > 4_000_000
    (log,) = (git_repo / ".git/navtui/sessions").glob("*.jsonl")
    # Unbounded, this log held the file twice (step diff and patch): ~9 MB.
    assert log.stat().st_size < size / 4 and log.stat().st_size < 8 * FIELD_LIMIT
    trajectory = read_trajectory(log)
    finished = trajectory.finished
    # The patch is summarised before the log sees it (big files by blob), or cut by the log.
    assert not finished.patch_complete or was_cut(finished.patch)
    (executed,) = [e.record for e in trajectory.events if type(e).__name__ == "StepExecuted"]
    # The whole file is in the checkpoint, and the export goes back to it for the patch.
    whole = (git_repo / "big.txt").read_text()
    assert git(git_repo, "show", f"{executed.checkpoint.commit}:big.txt") == whole
    exported = navtui("export", trajectory.session_id, "--format", "swebench", "--repo",
                      str(git_repo))
    assert exported.returncode == 0, exported.stderr
    patch = json.loads(exported.stdout)["model_patch"]
    assert "+000130000: a line of a generated file" in patch and not was_cut(patch)
    assert patch.count("\n+0") == 130_000


def test_a_huge_create_is_logged_cut_and_written_whole(git_repo: Path, tmp_path: Path):
    """The issue's 50 MB `create` (here ~1 MB): the reply, the action and the preview each held
    the whole text, ~9 copies in all."""
    text = "".join(f"{n:07d} {hashlib.sha256(str(n).encode()).hexdigest()}\n" for n in range(15_000))
    call = json.dumps({"name": "str_replace_editor", "arguments": {
        "command": "create", "path": "/testbed/big.txt", "file_text": text}})
    script = write_script(tmp_path / "s.jsonl", [f"<tool_call>\n{call}\n</tool_call>"])
    result = navtui("--auto", "--max-steps", "1", "--dialect", "toolcall", "--script", str(script),
                    "--issue", "x", str(git_repo))
    assert result.returncode == 2, result.stderr
    assert (git_repo / "big.txt").read_text() == text
    (log,) = (git_repo / ".git/navtui/sessions").glob("*.jsonl")
    assert log.stat().st_size < 8 * FIELD_LIMIT
    (proposed,) = [e for e in read_trajectory(log).events if isinstance(e, StepProposed)]
    assert was_cut(proposed.step.raw) and was_cut(proposed.step.action.file_text)
    assert proposed.step.action.file_text.startswith(text[:1000])
    assert hashlib.sha256(text.encode()).hexdigest() in proposed.step.action.file_text


def test_finished_patches_under_the_limit_are_kept_whole(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    writer = TrajectoryWriter(path)
    patch = "diff --git a/x b/x\n" + "+ok\n" * 1000
    writer(SessionFinished("submitted", "done", patch))
    writer.close()
    assert read_trajectory(path).finished.patch == patch
