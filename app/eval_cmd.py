"""`navtui eval REPO --tasks FILE --adapter A [--adapter B ...] [--json]`: each adapter on every
task (`agent_core.evaluation`), the resolved rates, and each adapter paired against the first.

An adapter is what the backend takes as one: with `--backend hf` a directory, Hub id, a
version of REPO's registry (`v2`, `current`) or `base` (no adapter); with `--backend openai` the
name the server serves it under (`--model` is set to it); with `--script-dir DIR` (replay) the
folder `DIR/<adapter>/` of `<instance_id>.jsonl` scripts. Every task runs with the same seed
(`--seed`, set before each task with a local model) and the backend's own sampling settings.

Progress and each pair's result go to stderr (with `--json`, JSON events on stdout); the last
stdout line is the summary: `adapters` (resolved, tasks, rate each), `paired` (each adapter
against the first), `decisions` (with `--sessions`: each adapter on the user's decisions in
those held-out sessions, `agent_core.evaluation.decisions`). A navtui adapter's manifest gets
its result under `eval` (with a server: the registry's version of the served name). Exit 0
done, 1 bad input, 3 interrupted (a re-run skips the pairs already done).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_core.sanitize import visible

if TYPE_CHECKING:
    from app.args import Parser

BASE = "base"  # the adapter name that means none


def add_eval_args(parser: Parser) -> None:
    from app.args import (
        add_backend_args, add_limit_args, add_patch_scope_args, add_sandbox_args, positive_float,
        positive_int,
    )

    parser.add_argument("repo", metavar="REPO", help="the repository the tasks come from")
    parser.add_argument("--tasks", required=True, metavar="FILE",
                        help="tasks from `navtui tasks REPO -o FILE`")
    parser.add_argument("--json", action="store_true", help="JSON events on stdout")
    parser.add_argument("--output", default="navtui-eval", metavar="DIR",
                        help="results.jsonl and each adapter's runs (default: navtui-eval)")
    parser.add_argument("--workers", type=positive_int, default=1, metavar="N",
                        help="tasks run at once (against a server that batches)")
    parser.add_argument("--script-dir", metavar="DIR",
                        help="replay: DIR/<adapter>/<instance_id>.jsonl (implies --backend replay)")
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="the seed set before each task with a local model (default 0)")
    parser.add_argument("--sessions", nargs="+", metavar="ID",
                        help="held-out sessions of REPO: also measure each adapter on their "
                             "decisions (needs --backend hf: log-probabilities)")
    parser.add_argument("--test-timeout", type=positive_float, default=600.0, metavar="S",
                        help="seconds one test run may take (default 600)")
    add_backend_args(parser, adapters=True)
    add_limit_args(parser)
    add_sandbox_args(parser)
    add_patch_scope_args(parser)


def adapter_args(args: argparse.Namespace, adapter: str) -> argparse.Namespace:
    """The session flags that run `adapter` (see the module docstring)."""
    from agent_core.adapters import Registry, RegistryError
    from agent_core.backends.factory import BackendConfig, default_backend, spec_for
    from agent_core.batch import safe_name

    flags = argparse.Namespace(**{**vars(args), "adapter": None})
    if args.script_dir:
        flags.backend = args.backend or default_backend(BackendConfig(script=args.script_dir))
        flags.script_dir = str(Path(args.script_dir) / safe_name(adapter))
        return flags
    backend = args.backend or default_backend(BackendConfig(model=args.model,
                                                            base_url=args.base_url))
    if not spec_for(backend).loads_weights:
        flags.model = adapter
        return flags
    flags.adapter = None if adapter == BASE else adapter
    if flags.adapter and not Path(adapter).expanduser().exists():
        try:
            flags.adapter = str(Registry(args.repo).get(adapter).path)
        except RegistryError:
            pass  # a Hub id, checked when the backend loads it
    return flags


def eval_main(args: argparse.Namespace) -> int:
    """Run the evaluation and print its summary."""
    from agent_core.evaluation.run import EvalError, load_tasks

    if len(set(args.adapter)) != len(args.adapter):
        return _error("each --adapter once")
    try:
        tasks = load_tasks(Path(args.tasks))
    except EvalError as error:
        return _error(str(error))
    return run_eval(args, tasks, Path(args.output).expanduser().resolve())[0]


def run_eval(args: argparse.Namespace, tasks: list[Any], output: Path
             ) -> tuple[int, dict[str, Any] | None]:
    """(exit code, summary) of evaluating `args.adapter` on `tasks` into `output`."""
    from agent_core.backends.base import BackendError
    from agent_core.batch import BatchOptions, SharedBackend
    from agent_core.evaluation.run import Evaluation, PairResult, Progress
    from agent_core.executor.sandbox import SandboxError
    from agent_core.tasks import CheckRunner
    from app.compose import backend_config, backend_secrets, backend_spec, sandbox_settings
    from app.compose import make_backend, session_config
    from app.subcommands import batch_backends

    try:
        sandbox = sandbox_settings(args)
    except SandboxError as error:
        return _error(str(error)), None
    shared: dict[str, SharedBackend] = {}

    def batch_for(adapter: str, folder: Path) -> BatchOptions:
        flags = adapter_args(args, adapter)
        config = session_config(flags)
        if backend_spec(backend_config(flags)).loads_weights:
            for old in shared.values():
                old.shutdown()  # one local model at a time
            shared.clear()
            shared[adapter] = SharedBackend(make_backend(flags))
        backends = batch_backends(flags, shared.get(adapter))
        return BatchOptions(output_dir=folder, config=config,
                            make_backend=lambda instance: _seeded(backends(instance), args.seed),
                            workers=args.workers, secrets=tuple(backend_secrets(flags)),
                            sandbox=sandbox)

    def said(pair: PairResult, progress: Progress) -> None:
        eta = progress.eta()
        line = (f"[{progress.done}/{progress.total}] {pair.adapter} {pair.instance_id}: "
                f"{'resolved' if pair.resolved else 'unresolved'} ({pair.status})"
                + (f" · ETA {eta:.0f}s" if eta is not None else ""))
        print(visible(line), file=sys.stderr, flush=True)
        if args.json:
            print(json.dumps({"event": "result", **pair.to_json(), "done": progress.done,
                              "total": progress.total, "eta_s": eta}), flush=True)

    evaluation = Evaluation(output, tasks, list(args.adapter), batch_for,
                            CheckRunner(output / "checks", sandbox, args.test_timeout), said,
                            lambda: print("navtui: stopping: running sessions quit after their "
                                          "current command…", file=sys.stderr, flush=True))
    try:
        solved = evaluation.run()
    except KeyboardInterrupt:
        print("navtui: stopped; re-run the same command to continue where it left off",
              file=sys.stderr)
        return 3, None
    except BackendError as error:
        return _error(str(error)), None
    finally:
        for backend in shared.values():
            backend.shutdown()
    try:
        decisions = decision_metrics(args)
    except (BackendError, ValueError) as error:
        return _error(str(error)), None
    summary = summarize(args, tasks, solved, decisions)
    print(json.dumps(summary), flush=True)
    return 0, summary


def decision_metrics(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each adapter's `agent_core.evaluation.decisions` on the `--sessions` (none without)."""
    from agent_core.backends.base import BackendError
    from agent_core.evaluation.decisions import measure
    from agent_core.learn.history import model_turns
    from agent_core.trajectory import TrajectoryError, find_trajectory, read_trajectory
    from app.compose import backend_config, backend_spec, make_backend

    if not args.sessions:
        return {}
    try:
        turns = [turn for session in args.sessions
                 for turn in model_turns(read_trajectory(find_trajectory(args.repo, session)))]
    except TrajectoryError as error:
        raise BackendError(str(error)) from None
    found = {}
    for adapter in args.adapter:
        flags = adapter_args(args, adapter)
        if not backend_spec(backend_config(flags)).loads_weights:
            raise BackendError("--sessions needs --backend hf: the decision metrics are "
                               "log-probabilities, which only a local model gives")
        backend = make_backend(flags)
        try:
            found[adapter] = measure(backend, turns, args.max_new_tokens).to_json()
        finally:
            backend.close()
        print(visible(f"{adapter} on {len(args.sessions)} held-out session(s): "
                      f"{found[adapter]}"), file=sys.stderr)
    return found


def _seeded(backend: Any, seed: int) -> Any:
    """`backend`, after seeding torch (when a local model loaded it) for the next task."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return backend


def manifest_dir(args: argparse.Namespace, adapter: str) -> Path | None:
    """The directory of the adapter `adapter` names: the one loaded, or for a server the
    registry's version of that name (served under it, as `navtui adapters export` prints)."""
    from agent_core.adapters import Registry, RegistryError
    from agent_core.trajectory import TrajectoryError

    loaded = adapter_args(args, adapter).adapter
    if loaded:
        return Path(loaded)
    try:
        return Registry(args.repo).get(adapter).path
    except (RegistryError, TrajectoryError):
        return None


def summarize(args: argparse.Namespace, tasks: list[Any], solved: dict[str, dict[str, bool]],
              decisions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Rates, the pairing against the first adapter, and each navtui adapter's manifest."""
    from agent_core.adapters import update_manifest
    from agent_core.evaluation.stats import compare

    first = args.adapter[0]
    rates = {a: {"resolved": sum(s.values()), "tasks": len(s),
                 "rate": round(sum(s.values()) / len(s), 4) if s else None}
             for a, s in solved.items()}
    paired = [compare(first, a, solved[first], solved[a]).to_json() for a in args.adapter[1:]]
    digest = hashlib.sha256("\n".join(sorted(t.instance_id for t in tasks)).encode()).hexdigest()
    for adapter in args.adapter:
        folder = manifest_dir(args, adapter)
        if folder is not None:
            update_manifest(folder, "eval", {
                "tasks_file": str(args.tasks), "tasks_sha256": digest, **rates[adapter],
                "paired": [p for p in paired if adapter in (p["a"], p["b"])],
                "decisions": decisions.get(adapter),
                "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            })
    for p in paired:
        print(visible(
            f"{p['b']} vs {p['a']}: {p['difference']:+.1%} resolved "
            f"(95% CI {p['ci_low']:+.1%} to {p['ci_high']:+.1%}; McNemar p={p['p_value']:.3g}); "
            f"only {p['a']}: {len(p['only_a'])}, only {p['b']}: {len(p['only_b'])}, "
            f"both: {p['both']}"), file=sys.stderr)
    for adapter, rate in rates.items():
        print(visible(f"{adapter}: {rate['resolved']}/{rate['tasks']} resolved"), file=sys.stderr)
    return {"adapters": rates, "paired": paired, "decisions": decisions}


def _error(message: str) -> int:
    print(f"navtui: {visible(message)}", file=sys.stderr)
    return 1
