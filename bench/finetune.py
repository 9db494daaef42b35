"""What `navtui finetune` costs per method: seconds per optimizer step and peak memory.

One logged session is made the way a user makes one (replay backend, real bash and git; steps
approved, rejected and edited, several times over), then each method (sft, dpo, kto) trains for
`--steps` steps in a fresh process of its own, so each peak is its own: peak RSS on CPU, peak
allocated VRAM on CUDA. Rows per second counts the rows the optimizer saw (batch 1; KTO batch 2).

Run: `python bench/finetune.py [--model DIR] [--steps 3] [--dialect text|toolcall]
[--load-in-4bit]`. Without `--model`: the tests' tiny Qwen3 (built on first use). On a GPU,
`--model Qwen/Qwen3-8B --load-in-4bit --dialect toolcall` measures the navigator's QLoRA.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPLIES = {
    "text": [
        "Thought: Look around first.\nAction: bash ls",
        "Thought: Start over.\nAction: bash rm -rf calc",
        "Thought: Read the tests.\nAction: bash cat tests/test_ops.py",
        "Thought: Read the code.\nAction: read calc/ops.py",
    ],
    "toolcall": [
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "rm -rf calc"}}\n</tool_call>',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "cat tests/test_ops.py"}}\n'
        "</tool_call>",
        '<tool_call>\n{"name": "bash", "arguments": {"command": "cat calc/ops.py"}}\n</tool_call>',
    ],
}


def make_session(root: Path, dialect: str, rounds: int, repo: Path | None = None) -> Path:
    """A repo (`repo`, else a new one under `root`) with one more session: per round, approve,
    reject, edit, approve."""
    from agent_core.actions import Bash
    from agent_core.steps import Approve, EditAction, Reject
    from agent_core.trajectory import TrajectoryWriter
    from tests.fixtures.repos import BUGGY_PROJECT, make_repo
    from tests.test_session import make_session as session_over, write_script

    root.mkdir(parents=True, exist_ok=True)
    repo = repo or make_repo(root / "repo", BUGGY_PROJECT)
    script = write_script(root / "script.jsonl", REPLIES[dialect] * rounds)
    session, _, _ = session_over(repo, script, dialect, max_steps=1000)
    session.subscribe(TrajectoryWriter(repo / ".git" / "navtui" / "sessions" / f"{session.id}.jsonl"))
    decisions = [Approve(), Reject("never delete code"), EditAction(Bash("cat calc/ops.py")),
                 Approve()]
    try:
        for _ in range(rounds):
            for decision in decisions:
                session.decide(session.propose() and decision)
    finally:
        session.close()
    return repo


def one(args: argparse.Namespace) -> None:
    """Train one method and print its figures as one JSON line."""
    import torch

    from agent_core.learn.trainer import Finetune, FinetuneOptions

    steps: list[float] = []
    options = FinetuneOptions(
        repo=Path(args.repo), model=args.model, out=Path(args.out), method=args.one,
        max_steps=args.steps, lr=1e-4, load_in_4bit=args.load_in_4bit,
    )

    def on_event(event: dict) -> None:
        if event.get("event") == "step":
            steps.append(time.perf_counter())

    started = time.perf_counter()
    summary = Finetune(options, on_event).run()
    per_step = [b - a for a, b in zip(steps, steps[1:])]
    cuda = torch.cuda.is_available()
    peak = (torch.cuda.max_memory_allocated() if cuda
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    batch = 2 if args.one == "kto" else 1
    mean = sum(per_step) / len(per_step) if per_step else float("nan")
    print(json.dumps({
        "method": args.one, "rows": summary["rows"], "steps": summary["steps"],
        "s_per_step": mean, "rows_per_s": batch / mean if per_step else float("nan"),
        "peak_gb": peak / 1e9, "memory": "VRAM" if cuda else "RSS",
        "total_s": time.perf_counter() - started,
        "before": summary["before"], "after": summary["after"],
    }))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="base model (default: the tests' tiny Qwen3)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--dialect", choices=tuple(REPLIES), default="text")
    parser.add_argument("--rounds", type=int, default=2, help="approve/reject/edit rounds")
    parser.add_argument("--load-in-4bit", action="store_true")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--repo", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args)
        return
    if args.model is None:
        from tests.fixtures.models import model_artefact

        args.model = str(model_artefact())
    with tempfile.TemporaryDirectory(prefix="navtui-bench-finetune-") as scratch:
        root = Path(scratch)
        repo = make_session(root, args.dialect, args.rounds)
        print(f"model {args.model} · {args.dialect} prompts · {args.steps} steps per method"
              f"{' · 4-bit' if args.load_in_4bit else ''}")
        print(f"{'method':<7}{'rows':>6}{'s/step':>10}{'rows/s':>9}{'peak GB':>10}  memory"
              f"{'before':>11}{'after':>10}")
        for method in ("sft", "dpo", "kto"):
            command = [sys.executable, "-W", "ignore", __file__, "--one", method,
                       "--repo", str(repo), "--out", str(root / method), "--model", args.model,
                       "--steps", str(args.steps)] + (["--load-in-4bit"] if args.load_in_4bit else [])
            result = subprocess.run(command, capture_output=True, text=True,
                                    env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            if result.returncode != 0:
                print(f"{method:<7} failed: {result.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(result.stdout.strip().splitlines()[-1])
            print(f"{method:<7}{r['rows']:>6}{r['s_per_step']:>10.2f}{r['rows_per_s']:>9.3f}"
                  f"{r['peak_gb']:>10.2f}  {r['memory']:<6}{r['before']:>11.4f}{r['after']:>10.4f}")


if __name__ == "__main__":
    main()
