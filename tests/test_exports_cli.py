"""The `navtui export`, `navtui sessions` and `navtui batch` commands as a user runs them."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_session import FIX_SCRIPTS, FIXED_LINE, repo_tests_pass, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")


def navtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVTUI, *args], capture_output=True, text=True, timeout=180)


def test_export_replay_then_rerun_gives_the_identical_patch(git_repo: Path, tmp_path: Path):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["toolcall"])
    first_patch = tmp_path / "first.patch"
    run = navtui("--auto", "--script", str(script), "--issue", "average is off by one",
                 "--patch-out", str(first_patch), str(git_repo))
    assert run.returncode == 0, run.stderr

    listed = navtui("sessions", str(git_repo))
    assert listed.returncode == 0 and "submitted" in listed.stdout
    assert "average is off by one" in listed.stdout
    listed_json = navtui("sessions", "--json", str(git_repo)).stdout
    [session] = [json.loads(line) for line in listed_json.splitlines()]

    exported = tmp_path / "exported.jsonl"
    out = navtui("export", session["id"], "--format", "replay", "--repo", str(git_repo),
                 "-o", str(exported))
    assert out.returncode == 0, out.stderr
    assert [json.loads(line)["output"] for line in exported.read_text().splitlines()] == \
        FIX_SCRIPTS["toolcall"]

    fresh = make_repo(tmp_path / "fresh", BUGGY_PROJECT)
    second_patch = tmp_path / "second.patch"
    again = navtui("--auto", "--script", str(exported), "--issue", "average is off by one",
                   "--patch-out", str(second_patch), str(fresh))
    assert again.returncode == 0, again.stderr
    assert second_patch.read_text() == first_patch.read_text()
    assert f"+{FIXED_LINE}" in first_patch.read_text() and repo_tests_pass(fresh)

    swebench = navtui("export", session["id"][:10], "--format", "swebench", "--repo",
                      str(git_repo))
    assert json.loads(swebench.stdout)["model_patch"] == first_patch.read_text()

    sft = navtui("export", session["path"], "--format", "sft-toolcall")
    row = json.loads(sft.stdout)
    assert "<pr_description>\naverage is off by one\n</pr_description>" in row["messages"][1]["content"]
    assert row["tools"]


def test_sessions_of_a_repo_without_sessions_and_of_a_non_repo(tmp_path: Path):
    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    empty = navtui("sessions", str(repo))
    assert empty.returncode == 0 and "No navtui sessions" in empty.stdout
    (tmp_path / "plain").mkdir()
    bad = navtui("sessions", str(tmp_path / "plain"))
    assert bad.returncode == 1 and "not a git repository" in bad.stderr


def test_batch_command_with_a_script_dir(tmp_path: Path):
    repos = [make_repo(tmp_path / f"r{i}", BUGGY_PROJECT) for i in range(3)]
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    lines = []
    for i, repo in enumerate(repos):
        instance_id = f"calc__{i}"
        write_script(scripts / f"{instance_id}.jsonl", FIX_SCRIPTS["xml"])
        lines.append(json.dumps({"instance_id": instance_id, "repo": str(repo),
                                 "base_commit": git(repo, "rev-parse", "HEAD").strip(),
                                 "problem_statement": "average is off by one"}))
    instances = tmp_path / "instances.jsonl"
    instances.write_text("\n".join(lines) + "\n")
    output = tmp_path / "out"

    run = navtui("batch", str(instances), "--workers", "2", "--backend", "replay",
                 "--script-dir", str(scripts), "--dialect", "xml", "--output", str(output))
    assert run.returncode == 0, run.stderr
    assert "3 of 3 instances have predictions" in run.stderr
    lines = (output / "predictions.jsonl").read_text().splitlines()
    predictions = [json.loads(line) for line in lines]
    assert sorted(p["instance_id"] for p in predictions) == ["calc__0", "calc__1", "calc__2"]
    assert all(f"+{FIXED_LINE}" in p["model_patch"] for p in predictions)
    assert all(git(repo, "status", "--porcelain") == "" for repo in repos)

    rerun = navtui("batch", str(instances), "--workers", "2", "--script-dir", str(scripts),
                   "--output", str(output))
    assert rerun.returncode == 0 and rerun.stderr.count("skipped") == 3
    assert len((output / "predictions.jsonl").read_text().splitlines()) == 3

    missing = navtui("batch", str(instances), "--backend", "replay", "--output", str(output))
    assert missing.returncode == 1 and "--script-dir" in missing.stderr
    no_model = navtui("batch", str(instances), "--backend", "hf", "--output", str(output))
    assert no_model.returncode == 1 and "--model" in no_model.stderr


def open_when_read(fifo: Path, process: subprocess.Popen) -> int:
    """The write end of `fifo` once a reader has opened it; fails if `process` ends first."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        assert process.poll() is None, process.communicate()[1]
        time.sleep(0.01)


def test_ctrl_c_stops_a_batch_that_a_rerun_then_finishes(tmp_path: Path):
    repo = make_repo(tmp_path / "r", BUGGY_PROJECT)
    base = git(repo, "rev-parse", "HEAD").strip()
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    started, gate = tmp_path / "started", tmp_path / "gate"
    os.mkfifo(gate)  # `cat gate` blocks until the test opens it for writing
    waiting = [f"Thought: Wait.\nAction: bash touch {started} && cat {gate}", *FIX_SCRIPTS["text"]]
    rows = []
    for i in range(2):
        write_script(scripts / f"calc__{i}.jsonl", waiting)
        rows.append(json.dumps({"instance_id": f"calc__{i}", "repo": str(repo),
                                "base_commit": base, "problem_statement": "average is off"}))
    instances = tmp_path / "instances.jsonl"
    instances.write_text("\n".join(rows) + "\n")
    output = tmp_path / "out"
    # No sandbox: the command meets the test at files outside the repository.
    command = [NAVTUI, "batch", str(instances), "--script-dir", str(scripts), "--output",
               str(output), "--sandbox", "off"]

    # Ctrl-C as a terminal sends it, even if this test runs where SIGINT is ignored (`cmd &`).
    running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    writer = open_when_read(gate, running)  # the first instance's command waits at `cat gate`
    assert started.exists()
    running.send_signal(signal.SIGINT)
    assert "Stopping" in running.stderr.readline()
    os.close(writer)  # `cat gate` ends; the instance quits at its next decision
    _, err = running.communicate(timeout=60)
    assert running.returncode == 3, err
    assert "Re-run the same command" in err and "stopped" in err
    assert not (output / "predictions.jsonl").exists()
    assert len(git(repo, "worktree", "list").splitlines()) == 1

    gate.unlink()
    gate.write_text("")  # no longer blocks
    again = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    assert len((output / "predictions.jsonl").read_text().splitlines()) == 2
