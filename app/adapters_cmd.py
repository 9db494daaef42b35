"""`navtui adapters [REPO] [list | add DIR | promote VERSION | rollback | export VERSION
--merged DIR]`: REPO's adapter versions (`agent_core.adapters`).

`list` (the default) prints each version with its training and evaluation figures, `*` at the
current one (`--json`: one object per version). `add` registers an adapter directory, `promote`
makes a version current (what `--adapter current` loads), `rollback` puts the one before back.
`export` merges a version into its base and saves it in DIR, and prints the vLLM line that
serves it unmerged. REPO defaults to the current directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agent_core.sanitize import visible

ACTIONS = ("list", "add", "promote", "rollback", "export")


def add_adapters_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="*", metavar="[REPO] ACTION [VERSION|DIR]",
                        help=f"REPO (default .), then one of {', '.join(ACTIONS)} (default list)")
    parser.add_argument("--merged", metavar="DIR",
                        help="export: where the merged model goes (new or empty)")
    parser.add_argument("--json", action="store_true", help="list: one JSON object per version")


def adapters_main(args: argparse.Namespace) -> int:
    from agent_core.adapters import Registry, RegistryError
    from agent_core.learn.adapter_dir import OutputError
    from agent_core.trajectory import TrajectoryError

    words = list(args.words)
    repo = "." if not words or words[0] in ACTIONS else words.pop(0)
    action = words.pop(0) if words else "list"
    if action not in ACTIONS:
        return _error(f"unknown action {action!r}: choose {', '.join(ACTIONS)}")
    wants = {"add": 1, "promote": 1, "export": 1}.get(action, 0)
    if len(words) != wants:
        what = {"add": "DIR", "promote": "VERSION", "export": "VERSION"}.get(action, "nothing")
        return _error(f"`navtui adapters {action}` takes {what}")
    try:
        registry = Registry(repo)
        if action == "list":
            return _list(registry, args.json)
        if action == "add":
            version = registry.add(Path(words[0]))
            print(f"{version.name}: {version.path}")
        elif action == "promote":
            version = registry.promote(words[0])
            print(f"current: {version.name} ({version.path})")
        elif action == "rollback":
            version = registry.rollback()
            print(f"current: {version.name} ({version.path})")
        else:
            return _export(registry.get(words[0]), args.merged)
    except (RegistryError, TrajectoryError, OutputError) as error:
        return _error(str(error))
    return 0


def version_row(version: Any, current: str | None) -> dict[str, Any]:
    manifest = version.manifest
    metrics = manifest.get("metrics") or {}
    evaluated = manifest.get("eval") or {}
    return {
        "version": version.name, "current": version.name == current, "path": str(version.path),
        "parent": manifest.get("parent"), "method": manifest.get("method"),
        "created": manifest.get("created") or version.added,
        "sessions": len(manifest.get("sessions") or []),
        "before": metrics.get("before"), "after": metrics.get("after"),
        "resolved": evaluated.get("resolved"), "tasks": evaluated.get("tasks"),
        "rate": evaluated.get("rate"),
    }


def _list(registry: Any, as_json: bool) -> int:
    current = registry.current.name if registry.current else None
    rows = [version_row(v, current) for v in registry.versions]
    if as_json:
        for row in rows:
            print(json.dumps(row))
        return 0
    if not rows:
        print("No adapters registered; `navtui finetune` adds each one it makes "
              "(or `navtui adapters REPO add DIR`).")
        return 0
    for row in rows:
        trained = (f"logp {row['before']:.3f} -> {row['after']:.3f}"
                   if isinstance(row["before"], float) and isinstance(row["after"], float) else "")
        rate = f"resolved {row['rate']:.1%}" if isinstance(row["rate"], float) else "not evaluated"
        print(visible(f"{'*' if row['current'] else ' '} {row['version']:<8} "
                      f"{row['method'] or '-':<8} {rate:<16} {trained:<24} {row['path']}"))
    return 0


def _export(version: Any, merged: str | None) -> int:
    from agent_core.adapters.export import export_merged, vllm_line

    print(f"serve it unmerged:  {vllm_line(version)}")
    if merged is None:
        return 0
    try:
        out = export_merged(version, Path(merged).expanduser())
    except ImportError as error:
        return _error(f"exporting needs the `local` extra ({error.name} is missing): "
                      "pip install 'navtui[local]'")
    print(f"merged into {out}; serve it with:  vllm serve {out}")
    return 0


def _error(message: str) -> int:
    print(f"navtui: {visible(message)}", file=sys.stderr)
    return 1
