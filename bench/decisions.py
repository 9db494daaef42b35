"""How `navtui finetune --method auto` moves each kind of decision, on sessions made the way a
user makes them, with trl's own evaluation metrics.

`--sessions N` text-dialect sessions on one repository (replay backend, real bash and git), each
one round of: approve, reject `rm -rf` ("never delete code"), edit, approve. The newest share
`--holdout` of them is held out. One `navtui finetune` run (per-method defaults unless `--lr` /
`--epochs` / `--max-steps` are given) prints, per decision (approved, edited, the model's
original, rejected), trl's `logps` before and after on the training and held-out sessions, and
navtui's warnings.

Run: `python bench/decisions.py [--model DIR] [--sessions 6] [--holdout 0.34] [--lr LR]
[--epochs E] [--max-steps N]`. Without `--model`: the tests' tiny Qwen3.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.finetune import make_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="base model (default: the tests' tiny Qwen3)")
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--holdout", type=float, default=0.34)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--epochs", type=float)
    parser.add_argument("--max-steps", type=int)
    args = parser.parse_args()
    if args.model is None:
        from tests.fixtures.models import model_artefact

        args.model = str(model_artefact())
    from agent_core.learn.trainer import Finetune, FinetuneOptions

    with tempfile.TemporaryDirectory(prefix="navtui-bench-decisions-") as scratch:
        root = Path(scratch)
        repo = None
        for n in range(args.sessions):
            repo = make_session(root / f"s{n}", "text", 1, repo=repo)
        assert repo is not None
        options = FinetuneOptions(repo=repo, model=args.model, out=root / "adapter",
                                  holdout=args.holdout, lr=args.lr, epochs=args.epochs,
                                  max_steps=args.max_steps)
        summary = Finetune(options).run()
    print(f"model {args.model} · {args.sessions} sessions, {len(summary['held_out_sessions'])} "
          f"held out · {summary['method']} · {summary['steps']} steps · {summary['seconds']} s")
    print(f"{'decision':<10}{'split':<10}{'rows':>5}{'logps before':>14}{'after':>10}"
          f"{'rewards after':>15}")
    for split, found in summary["decisions"].items():
        for name, before in found["before"].items():
            after = found["after"][name]
            print(f"{name:<10}{split:<10}{before['rows']:>5}{before['logps']:>14.2f}"
                  f"{after['logps']:>10.2f}{after['rewards']:>15.3f}")
    for warning in summary["warnings"]:
        print(f"warning: {warning}")


if __name__ == "__main__":
    main()
