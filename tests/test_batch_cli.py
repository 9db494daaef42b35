"""`navtui batch` as users call it: a relative --output from another directory, hostile
instance ids, Ctrl-C mid-run, JSON progress events (real git repos, real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_core.batch import BatchError, Checkouts, Instance, load_instances
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_session import FIX_SCRIPTS, FIXED_LINE, write_script
from tests.test_cli import navtui


def three_instances(tmp_path: Path, script: list[str]) -> tuple[Path, Path, list[Path]]:
    repos = [make_repo(tmp_path / f"r{i}", BUGGY_PROJECT) for i in range(3)]
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    lines = []
    for i, repo in enumerate(repos):
        write_script(scripts / f"calc__{i}.jsonl", script)
        lines.append(json.dumps({"instance_id": f"calc__{i}", "repo": str(repo),
                                 "base_commit": git(repo, "rev-parse", "HEAD").strip(),
                                 "problem_statement": "average is off by one"}))
    instances = tmp_path / "instances.jsonl"
    instances.write_text("\n".join(lines) + "\n")
    return instances, scripts, repos


def test_a_relative_output_is_the_users_cwd_and_leaves_no_worktree_registered(tmp_path: Path):
    instances, scripts, repos = three_instances(tmp_path, FIX_SCRIPTS["text"])
    cwd = tmp_path / "work"
    cwd.mkdir()
    run = navtui("batch", str(instances), "--workers", "2", "--script-dir", str(scripts),
                 "--dialect", "text", "--output", "out", "--json", cwd=cwd)
    assert run.returncode == 0, run.stderr
    assert "3 of 3 instances have predictions" in run.stderr
    lines = (cwd / "out/predictions.jsonl").read_text().splitlines()
    predictions = [json.loads(line) for line in lines]
    assert sorted(p["instance_id"] for p in predictions) == ["calc__0", "calc__1", "calc__2"]
    assert all(f"+{FIXED_LINE}" in p["model_patch"] for p in predictions)
    for repo in repos:
        assert len(git(repo, "worktree", "list").splitlines()) == 1
        assert not (repo / "out").exists()
    assert list((cwd / "out/checkouts").iterdir()) == []

    events = [json.loads(line) for line in run.stdout.splitlines()]
    progress = [e for e in events if e["event"] == "progress"]
    assert [p["done"] for p in progress] == [1, 2, 3]
    assert progress[-1] | {"elapsed_s": 0, "eta_s": 0} == {
        "event": "progress", "total": 3, "done": 3, "running": 0, "failed": 0, "skipped": 0,
        "stopped": 0, "elapsed_s": 0, "eta_s": 0}
    assert progress[-1]["eta_s"] == 0
    assert {e["instance_id"] for e in events if e["event"] == "result"} == {
        "calc__0", "calc__1", "calc__2"}
    assert "3/3 done · 0 running · 0 failed · ETA 0s" in run.stderr

    rerun = navtui("batch", str(instances), "--script-dir", str(scripts), "--output", "out",
                   "--json", cwd=cwd)
    assert rerun.returncode == 0, rerun.stderr
    last = [json.loads(line) for line in rerun.stdout.splitlines()][-1]
    assert (last["skipped"], last["done"]) == (3, 0)
    assert "3/3 done (3 in an earlier run)" in rerun.stderr


@pytest.mark.parametrize("bad", ["..", ".", "", "a/b", "..\\x", "a\u0000b", "tab\there"])
def test_instance_ids_that_name_no_folder_of_their_own_are_refused_with_the_line(
    tmp_path: Path, bad: str
):
    good = {"instance_id": "ok", "repo": ".", "base_commit": "abc", "problem_statement": "p"}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"instance_id": bad}) + "\n")
    with pytest.raises(BatchError, match=r"instances\.jsonl:2: .*instance_id"):
        load_instances(path)


def test_ids_that_would_share_a_folder_are_duplicates(tmp_path: Path):
    rows = [{"instance_id": i, "repo": ".", "base_commit": "abc", "problem_statement": "p"}
            for i in ("a b", "a_b")]
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(BatchError, match=r"instances\.jsonl:2: duplicate instance_id 'a_b'"):
        load_instances(path)


def test_a_dotdot_instance_leaves_the_output_folder_alone(tmp_path: Path):
    repo = make_repo(tmp_path / "repo", BUGGY_PROJECT)
    output = tmp_path / "out"
    (output / "checkouts").mkdir(parents=True)
    (output / "predictions.jsonl").write_text('{"instance_id": "earlier"}\n')
    (output / "notes.txt").write_text("the user's own file\n")
    row = {"instance_id": "..", "repo": str(repo),
           "base_commit": git(repo, "rev-parse", "HEAD").strip(), "problem_statement": "p"}
    instances = tmp_path / "instances.jsonl"
    instances.write_text(json.dumps(row) + "\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    write_script(scripts / "...jsonl", FIX_SCRIPTS["text"])  # DIR/<instance_id>.jsonl
    run = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                 "--output", str(output))
    assert (output / "notes.txt").read_text() == "the user's own file\n"
    assert run.returncode == 1
    assert "instances.jsonl:1: instance_id '..'" in run.stderr
    assert (output / "predictions.jsonl").read_text() == '{"instance_id": "earlier"}\n'

    checkouts = Checkouts(output / "checkouts")
    hostile = Instance("..", repo, row["base_commit"], "p")
    with pytest.raises(BatchError):
        checkouts.add(hostile)
    with pytest.raises(BatchError, match="refusing to remove"):
        checkouts.remove(output / "checkouts" / "..")
    (output / "checkouts/escape").symlink_to(output)
    with pytest.raises(BatchError, match="refusing to remove"):
        checkouts.remove(output / "checkouts/escape")
    assert (output / "notes.txt").exists() and (output / "checkouts/escape").is_symlink()


def test_ctrl_c_mid_batch_removes_every_checkout(tmp_path: Path):
    # The first command of every instance waits on a gate the test opens only once the batch
    # says it is stopping, so no instance can finish before Ctrl-C however slow the machine.
    # The gate is in each instance's checkout: the sandbox (on by default) shows the command
    # its checkout, never the rest of the host's /tmp.
    slow = ["Thought: Wait.\nAction: bash while [ ! -e .gate ]; do sleep 0.05; done",
            *FIX_SCRIPTS["text"]]
    instances, scripts, repos = three_instances(tmp_path, slow)
    output = tmp_path / "out"
    env = {**os.environ, "COLUMNS": "120"}
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "batch", str(instances), "--workers", "2",
         "--script-dir", str(scripts), "--dialect", "text", "--output", str(output)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    stderr: list[str] = []
    reader = threading.Thread(
        target=lambda: stderr.extend(iter(lambda: process.stderr.read(1), "")))
    reader.start()
    deadline = time.monotonic() + 120
    checkouts = output / "checkouts"
    while not checkouts.is_dir() or len(list(checkouts.iterdir())) < 2:
        assert time.monotonic() < deadline and process.poll() is None, "".join(stderr)
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    while "Stopping:" not in "".join(stderr):
        assert time.monotonic() < deadline and process.poll() is None, "".join(stderr)
        time.sleep(0.05)
    for checkout in checkouts.iterdir():
        (checkout / ".gate").touch()
    process.wait(timeout=120)
    reader.join(timeout=30)
    assert process.returncode == 3, "".join(stderr)
    assert "Re-run the same command" in "".join(stderr)
    for repo in repos:
        assert len(git(repo, "worktree", "list").splitlines()) == 1
        assert git(repo, "status", "--porcelain") == ""
    assert list((output / "checkouts").iterdir()) == []
    assert not (output / "predictions.jsonl").exists()


def test_every_server_backend_of_a_batch_shares_one_busy_backoff(scripted_http):
    from app.args import batch_parser
    from app.subcommands import batch_backends

    args = batch_parser().parse_args(["instances.jsonl", "--workers", "4", "--base-url",
                                      scripted_http.base_url, "--model", "navigator-8b"])
    backend_for = batch_backends(args, None)
    one, two = (backend_for(Instance(f"i{n}", Path("."), "abc", "p")) for n in range(2))
    try:
        assert one is not two and one.busy is two.busy
    finally:
        one.close()
        two.close()
