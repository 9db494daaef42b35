"""`navtui finetune`'s ties to REPO's adapter registry: `--adapter current` (or a version) as the
parent, `--since VERSION` (only sessions newer than that adapter), every new adapter registered,
and `--gate` (the new adapter evaluated against its parent on held-out tasks, made current only
when not worse: `agent_core.evaluation.gate`).

The gate's evaluation is `navtui eval` with the hf backend on the base model: the parent (its
registry version, or `base` without one) first, then the new version; `--gate-tasks FILE` names
the tasks (default: `navtui tasks` mined now), `--gate-eval "FLAGS"` adds eval flags (e.g.
`--max-steps 10 --sandbox off`). REPO's sessions that neither adapter trained on are measured
too (`eval --sessions`: the user's held-out decisions). Its results stay in `.git/navtui/gate/<version>/`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_core.adapters import CURRENT, Registry, RegistryError, Version
from agent_core.sanitize import visible
from agent_core.trajectory import list_sessions, repo_state_dir


def add_gate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", metavar="VERSION",
                        help="train only on sessions started after that adapter was made")
    parser.add_argument("--gate", action="store_true",
                        help="evaluate the new adapter against its parent on held-out tasks and "
                             "make it current only if it is not worse")
    parser.add_argument("--gate-tasks", metavar="FILE",
                        help="the gate's tasks (default: `navtui tasks REPO`, mined now)")
    parser.add_argument("--gate-eval", default="", metavar="FLAGS",
                        help="more `navtui eval` flags for the gate, e.g. \"--max-steps 10\"")


def parent_adapter(repo: Path, adapter: str | None) -> str | None:
    """`--adapter` as a directory when it names a registered version (`current`, `v2`)."""
    if adapter is None or Path(adapter).expanduser().exists():
        return adapter
    try:
        return str(Registry(repo).get(adapter).path)
    except RegistryError:
        if adapter == CURRENT:
            raise
        return adapter  # a Hub id


def sessions_since(repo: Path, version: str) -> list[str]:
    """REPO's sessions started after `version` was made (RegistryError when none)."""
    made = Registry(repo).get(version)
    created = made.manifest.get("created") or made.added
    try:
        when = datetime.fromisoformat(str(created).replace("Z", "+00:00"))
    except ValueError:
        raise RegistryError(f"{made.name} has no readable creation time ({created!r})") from None
    newer = [s.id for s in list_sessions(repo) if s.started is not None and s.started > when]
    if not newer:
        raise RegistryError(f"no session started after {made.name} was made ({created}): "
                            "nothing new to train on")
    return newer


def run_gate(args: argparse.Namespace, version: Version, parent: str | None,
             trained: list[str]) -> dict[str, Any]:
    """Evaluate `version` against `parent` and promote it when not worse; the verdict."""
    from agent_core.evaluation.gate import decide, held_out
    from agent_core.evaluation.run import EvalError, load_tasks
    from agent_core.evaluation.stats import Paired
    from app.args import Parser
    from app.eval_cmd import BASE, add_eval_args, run_eval

    repo = Path(args.repo)
    registry = Registry(repo)
    parent_name = BASE if parent is None else _registered(registry, parent)
    output = repo_state_dir(repo) / "gate" / version.name
    output.mkdir(parents=True, exist_ok=True)
    try:
        tasks_file = Path(args.gate_tasks) if args.gate_tasks else _mine(repo, output)
        tasks = held_out(load_tasks(tasks_file), trained)
    except EvalError as error:
        tasks, tasks_file = [], None
        print(f"navtui: gate: {visible(str(error))}", file=sys.stderr)
    paired, decisions = None, {}
    if tasks:
        kept = output / "held-out-tasks.jsonl"
        kept.write_text("".join(_line(t) for t in tasks), encoding="utf-8")
        parser = Parser(prog="navtui finetune --gate")
        add_eval_args(parser)
        extra = shlex.split(args.gate_eval)
        sessions = [] if "--sessions" in extra else untrained_sessions(repo, trained, parent)
        eval_args = parser.parse_args([
            str(repo), "--tasks", str(kept), "--adapter", parent_name, "--adapter", version.name,
            "--backend", "hf", "--model", args.model, "--output", str(output), *extra,
            *(["--sessions", *sessions] if sessions else [])])
        code, summary = run_eval(eval_args, tasks, output)
        if summary is None:
            raise KeyboardInterrupt if code == 3 else RegistryError("the gate's evaluation failed")
        paired = Paired(**summary["paired"][0])
        decisions = summary["decisions"]
    verdict = decide(version.name, parent_name, paired, decisions.get(parent_name),
                     decisions.get(version.name))
    if verdict.promote:
        registry.promote(version.name)
    current = registry.current.name if registry.current else "none"
    word = "promote" if verdict.promote else "refuse"
    print(visible(f"gate: {word} {version.name}: {verdict.reason}; current: {current}"),
          file=sys.stderr)
    return {**verdict.to_json(), "version": version.name, "parent": parent_name,
            "current": current, "tasks": len(tasks), "tasks_file": str(tasks_file)}


def untrained_sessions(repo: Path, trained: list[str], parent: str | None) -> list[str]:
    """REPO's finished sessions that neither the new adapter nor its parent trained on."""
    from agent_core.backends.identity import read_manifest

    seen = set(trained) | set((read_manifest(parent) or {}).get("sessions") or [])
    return [s.id for s in list_sessions(repo) if s.id not in seen and s.status != "running"]


def _registered(registry: Registry, parent: str) -> str:
    """The parent's registry name (registered now when it is a local adapter), else itself."""
    try:
        return registry.add(Path(parent)).name
    except RegistryError:
        return parent


def _mine(repo: Path, output: Path) -> Path:
    from agent_core.executor.sandbox import SandboxSettings
    from agent_core.tasks import CheckRunner, find_tasks

    print("gate: finding tasks in the repository's history (`navtui tasks`)…", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="navtui-gate-") as work:
        mined = find_tasks(repo, CheckRunner(Path(work), SandboxSettings(mode="auto")))
    path = output / "tasks.jsonl"
    path.write_text("".join(_line(t) for t in mined.tasks), encoding="utf-8")
    return path


def _line(task: Any) -> str:
    return json.dumps(task.to_json(), ensure_ascii=False) + "\n"
