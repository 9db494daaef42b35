"""`navtui batch --ray ADDRESS`: each instance a task on an existing Ray cluster, the predictions
gathered here.

This process connects to the cluster (`ray.init(address=ADDRESS)`), submits one task per instance
that has no prediction yet (at most `--workers` at once) and writes what each task returns into
the output folder as a local batch does: the prediction into `predictions.jsonl`, the session log
into `trajectories/<id>.jsonl`. A task runs `navtui batch` for its one instance on the node Ray
chose, with this command's flags (less `--ray`, `--output`, `--workers`, `--slice`, `--shard`),
in a temporary folder of that node: each node needs navtui installed (`pip install
'navtui[ray]'`), the model server's URL reachable, and the instance's repository (a path every
node sees, or an `owner/name` it can clone). Ray schedules and retries nothing else: navtui
coordinates nothing of its own.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agent_core.batch import Instance, Predictions, safe_name
from agent_core.sanitize import visible

# Flags of `navtui batch` the driver keeps for itself (with their values).
DRIVER_ONLY = ("--ray", "--output", "--workers", "--slice", "--shard", "--json")
RAY_HINT = "navtui batch --ray needs Ray: pip install 'navtui[ray]' (on every node too)"


def forwarded_flags(argv: list[str], instances_path: str) -> list[str]:
    """`navtui batch`'s arguments for a task: `argv` (what follows `batch`) without the
    instances file and the driver's own flags."""
    out: list[str] = []
    skip = False
    dropped_file = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in DRIVER_ONLY:
            skip = "=" not in arg and name != "--json"
            continue
        if arg == instances_path and not dropped_file:
            dropped_file = True
            continue
        out.append(arg)
    return out


def instance_line(instance: Instance) -> str:
    return json.dumps({"instance_id": instance.instance_id,
                       "repo": instance.slug or str(instance.repo),
                       "base_commit": instance.base_commit,
                       "problem_statement": instance.problem_statement})


def run_instance(line: str, flags: list[str]) -> dict[str, Any]:
    """One instance through `navtui batch` in a temporary folder (the Ray task's body)."""
    with tempfile.TemporaryDirectory(prefix="navtui-ray-") as tmp:
        folder = Path(tmp)
        (folder / "instance.jsonl").write_text(line + "\n", encoding="utf-8")
        ran = subprocess.run(
            [sys.executable, "-m", "app.cli", "batch", str(folder / "instance.jsonl"),
             "--output", str(folder / "out"), "--json", *flags],
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        results = [json.loads(text) for text in ran.stdout.splitlines()
                   if text.startswith('{"event": "result"')]
        predictions = folder / "out/predictions.jsonl"
        identifier = json.loads(line)["instance_id"]
        log = folder / "out/trajectories" / f"{safe_name(identifier)}.jsonl"
        return {
            "instance_id": identifier,
            "status": results[-1]["status"] if results else "error",
            "message": results[-1]["message"] if results else ran.stderr.strip()[-500:],
            "prediction": (json.loads(predictions.read_text(encoding="utf-8").splitlines()[0])
                           if predictions.exists() else None),
            "trajectory": log.read_text(encoding="utf-8") if log.exists() else None,
        }


def ray_main(args: argparse.Namespace, instances: list[Instance]) -> int:
    """Run `instances` on the Ray cluster at `args.ray`; the exit code as a local batch's."""
    try:
        import ray
    except ImportError:
        print(f"navtui: {RAY_HINT}", file=sys.stderr)
        return 1
    output = Path(args.output).expanduser().resolve()
    (output / "trajectories").mkdir(parents=True, exist_ok=True)
    predictions = Predictions(output / "predictions.jsonl")
    done = predictions.finished_ids()
    todo = [i for i in instances if i.instance_id not in done]
    argv = sys.argv[sys.argv.index("batch") + 1:] if "batch" in sys.argv else []
    flags = forwarded_flags(argv, args.instances)
    try:
        ray.init(address=args.ray, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        print(f"navtui: cannot reach the Ray cluster at {args.ray}: {error}", file=sys.stderr)
        return 1
    task = ray.remote(num_cpus=1)(run_instance)
    statuses: list[str] = []
    pending: list[Any] = []
    queue = list(todo)
    try:
        while queue or pending:
            while queue and len(pending) < args.workers:
                pending.append(task.remote(instance_line(queue.pop(0)), flags))
            ready, pending = ray.wait(pending, num_returns=1)
            result = ray.get(ready[0])
            statuses.append(_gather(result, output, predictions, args.json))
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        print("Stopped. Re-run the same command to continue where it left off.", file=sys.stderr)
        return 3
    finally:
        ray.shutdown()
    print(f"{len(done) + sum(s not in ('error', 'server_unavailable') for s in statuses)} of "
          f"{len(instances)} instances have predictions in {output / 'predictions.jsonl'} "
          f"(ran on the Ray cluster at {args.ray})", file=sys.stderr)
    return 1 if "error" in statuses else 2 if "server_unavailable" in statuses else 0


def _gather(result: dict[str, Any], output: Path, predictions: Predictions, as_json: bool) -> str:
    """Write one task's prediction and log; say its result."""
    if result["trajectory"] is not None:
        log = output / "trajectories" / f"{safe_name(result['instance_id'])}.jsonl"
        log.write_text(result["trajectory"], encoding="utf-8")
    if result["prediction"] is not None:
        predictions.append(result["prediction"])
    print(visible(f"{result['status']:>16} {result['instance_id']} {result['message']}"),
          file=sys.stderr)
    if as_json:
        print(json.dumps({"event": "result", "instance_id": result["instance_id"],
                          "status": result["status"], "message": result["message"]}), flush=True)
    return str(result["status"])
