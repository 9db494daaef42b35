"""`navtui finetune`: its arguments, and its progress on the terminal (training is in
`agent_core.learn.trainer`).

On a terminal: a progress bar per phase (step, loss, ETA) on stderr. With `--json`: one JSON
event per line on stdout. Either way the last stdout line is the JSON summary (`out`, `method`,
`rows`, `before`, `after`, ..., `version`: its name in REPO's adapter registry, and with
`--gate` the gate's verdict, `app.gate`). Exit codes: 0 trained, 1 refused or failed, 3 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from agent_core.sanitize import visible


def add_finetune_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", metavar="REPO",
                        help="the repository whose logged sessions are the training data")
    parser.add_argument("--model", required=True, metavar="BASE",
                        help="the base model (Hub id or directory) the adapter is for")
    parser.add_argument("--adapter", metavar="PARENT",
                        help="continue this LoRA adapter (its LoRA config is kept)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="where the new adapter goes; must not exist or be empty")
    parser.add_argument("--sessions", nargs="+", metavar="ID",
                        help="train on these sessions only (default: all of REPO's)")
    parser.add_argument("--method", choices=("auto", "sft", "dpo", "kto"), default="auto",
                        help="auto (default): SFT on approved and edited steps, then DPO on "
                             "edits and rejections (KTO when a rejection has no approved "
                             "reply after it)")
    parser.add_argument("--max-steps", type=int, metavar="N", help="optimizer steps per phase")
    parser.add_argument("--epochs", type=float, metavar="E",
                        help="passes over the rows per phase when --max-steps is not given "
                             "(default 3)")
    parser.add_argument("--lr", type=float, metavar="LR",
                        help="learning rate (default per method, from trl's LoRA examples: "
                             "sft 2e-4, dpo 5e-6, kto 5e-6)")
    parser.add_argument("--load-in-4bit", action="store_true",
                        help="QLoRA: the base model in 4-bit (needs a CUDA GPU)")
    parser.add_argument("--holdout", type=float, default=0.0, metavar="F",
                        help="hold out the newest share F of the sessions (whole sessions, "
                             "from every phase) and report them before and after too")
    parser.add_argument("--json", action="store_true", help="JSON events on stdout")
    from app.gate import add_gate_args

    add_gate_args(parser)


class Display:
    """Training events as a progress bar on stderr (`json`: as JSON lines on stdout)."""

    def __init__(self, json_lines: bool) -> None:
        self.json_lines = json_lines
        self.console = Console(stderr=True)
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "warning":  # on stderr either way
            self.console.print(f"navtui: warning: {visible(event['message'])}", markup=False,
                               highlight=False, soft_wrap=True)
        if self.json_lines:
            if kind != "done":
                print(json.dumps(event), flush=True)
            return
        if kind == "phase":
            self.close()
            self.console.print(f"{event['method']}: {event['rows']} rows, lr {event['lr']:g}, "
                               f"{event['epochs']:g} epochs, batch {event['batch']}")
            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(),
                TextColumn("step {task.fields[step]} · loss {task.fields[loss]}"),
                TimeRemainingColumn(), console=self.console, transient=False,
            )
            self.progress.start()
            self.task = self.progress.add_task(event["method"], total=None, step="-", loss="-")
        elif kind == "step" and self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=event["step"], total=event["max_steps"],
                                 step=f"{event['step']}/{event['max_steps']}",
                                 loss=f"{event['loss']:.4f}")
        elif kind == "done":
            self.close()

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def finetune_main(args: argparse.Namespace) -> int:
    """Train an adapter on REPO's sessions; the summary is the last line on stdout."""
    if not Path(args.repo).is_dir():
        return _error(f"{args.repo} is not a directory: pass the repository navtui ran on")
    try:
        from agent_core.learn.trainer import Finetune, FinetuneError, FinetuneOptions
    except ImportError as error:
        return _error(f"navtui finetune needs the `local` and `train` extras ({error.name} "
                      "is missing): pip install 'navtui[local,train]'")
    from agent_core.backends.base import BackendError
    from agent_core.learn.adapter_dir import OutputError
    from agent_core.learn.rows import RowError
    from agent_core.adapters import Registry, RegistryError
    from agent_core.trajectory import TrajectoryError
    from app.gate import parent_adapter, run_gate, sessions_since

    if args.since and args.sessions:
        return _error("--since and --sessions both choose the sessions: pass one of them")
    try:
        parent = parent_adapter(Path(args.repo), args.adapter)
        sessions = sessions_since(Path(args.repo), args.since) if args.since else args.sessions
    except (RegistryError, TrajectoryError) as error:
        return _error(str(error))
    options = FinetuneOptions(
        repo=Path(args.repo), model=args.model, out=Path(args.out), adapter=parent,
        sessions=sessions, method=args.method, max_steps=args.max_steps,
        epochs=args.epochs, lr=args.lr, load_in_4bit=args.load_in_4bit, holdout=args.holdout,
    )
    display = Display(args.json)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            summary = Finetune(options, display).run()
    except (FinetuneError, OutputError, RowError, TrajectoryError, BackendError) as error:
        display.close()
        return _error(str(error))
    except KeyboardInterrupt:
        display.close()
        print(f"navtui: interrupted; nothing was written to {options.out}", file=sys.stderr)
        return 3
    from agent_core.learn.provenance import is_main_process

    if not is_main_process():  # torchrun / accelerate: the main process registers and reports
        return 0
    try:
        version = Registry(options.repo).add(options.out)
        summary["version"] = version.name
        if args.gate:
            summary["gate"] = run_gate(args, version, parent, _trained(options.out))
    except (RegistryError, TrajectoryError) as error:
        return _error(str(error))
    except KeyboardInterrupt:
        print(f"navtui: the gate was interrupted; {options.out} is registered, not current",
              file=sys.stderr)
        return 3
    print(json.dumps(summary), flush=True)
    for name in summary["too_long"]:
        print(f"navtui: left out (longer than the model's window): {visible(name)}",
              file=sys.stderr)
    return 0


def _trained(adapter: Path) -> list[str]:
    """The sessions the adapter's manifest says it trained on."""
    from agent_core.backends.identity import read_manifest

    sessions = (read_manifest(adapter) or {}).get("sessions")
    return [str(s) for s in sessions] if isinstance(sessions, list) else []


def _error(message: str) -> int:
    print(f"navtui: {visible(message)}", file=sys.stderr)
    return 1
