"""`navtui batch --ray ADDRESS` against a real local Ray cluster (`ray start --head`): each
instance runs as a Ray task, the predictions and logs are gathered into the output folder, a
re-run skips what is done. Skipped where Ray is not installed (the optional `[ray]` extra)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.batch_ray import forwarded_flags
from tests.fixtures.servers import free_port
from tests.test_batch_cli import three_instances
from tests.test_cli import navtui
from tests.test_session import FIX_SCRIPTS, FIXED_LINE

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'navtui[ray]'")


def test_the_driver_keeps_its_own_flags_and_forwards_the_rest() -> None:
    argv = ["in.jsonl", "--ray", "auto", "--workers=4", "--output", "o", "--slice", "0:2",
            "--shard", "1/2", "--json", "--dialect", "text", "--script-dir", "s"]
    assert forwarded_flags(argv, "in.jsonl") == ["--dialect", "text", "--script-dir", "s"]


@pytest.fixture
def ray_cluster() -> Iterator[str]:
    port = free_port()
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # socket paths must stay short
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    cli = [sys.executable, "-m", "ray.scripts.scripts"]
    started = subprocess.run(
        [*cli, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}"],
        capture_output=True, text=True, env=env, timeout=300)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([*cli, "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def test_each_instance_runs_as_a_ray_task_and_the_predictions_are_gathered(
    tmp_path: Path, ray_cluster: str
) -> None:
    instances, scripts, _ = three_instances(tmp_path, FIX_SCRIPTS["text"])
    output = tmp_path / "out"
    run = navtui("batch", str(instances), "--ray", ray_cluster, "--workers", "2",
                 "--script-dir", str(scripts), "--dialect", "text", "--output", str(output),
                 "--json", env={"RAY_USAGE_STATS_ENABLED": "0"})
    assert run.returncode == 0, run.stdout + run.stderr
    predictions = [json.loads(line) for line in
                   (output / "predictions.jsonl").read_text().splitlines()]
    assert sorted(p["instance_id"] for p in predictions) == ["calc__0", "calc__1", "calc__2"]
    assert all(f"+{FIXED_LINE}" in p["model_patch"] for p in predictions)
    assert sorted(p.name for p in (output / "trajectories").iterdir()) == [
        "calc__0.jsonl", "calc__1.jsonl", "calc__2.jsonl"]
    results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert [r["status"] for r in results] == ["submitted"] * 3
    again = navtui("batch", str(instances), "--ray", ray_cluster, "--script-dir", str(scripts),
                   "--dialect", "text", "--output", str(output), "--json")
    assert again.returncode == 0 and not [line for line in again.stdout.splitlines()
                                          if line.startswith("{")], "nothing left to run"
