"""What the repetition guard and the stuck detector cost per turn, on the real session path.

One run, interleaved: a real `Session` (replay backend, real bash, real git repo) consumes the
same long non-repeating replies with the `RepetitionGuard` it ships with, and with a guard that
does nothing; the stuck detector is timed per executed step against the step itself.

Run: `python bench/habits_overhead.py [--chars 8000] [--turns 20] [--chunk 4]`
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import agent_core.session as session_module
from agent_core.actions import Bash
from agent_core.backends.replay import ReplayBackend
from agent_core.executor import Executor
from agent_core.policy import AutoPolicy
from agent_core.session import Session, SessionConfig
from agent_core.steps import Observation
from agent_core.stuck import StuckDetector
from agent_core.workspace import Workspace

WORDS = "the a parse file value return error test module call line path index config".split()


class NoGuard:
    def feed(self, chunk: str) -> None:
        return None


def reply(rng: random.Random, chars: int, n: int) -> str:
    """A long, varied thought (nothing repeats) and one cheap action."""
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(f"{rng.choice(WORDS)}{rng.randrange(10_000)}")
    return f"Thought: {' '.join(words)}\nAction: bash echo {n}"


def make_repo(root: Path) -> Path:
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@navtui.invalid"]
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "i"], cwd=root, check=True)
    return root


def generation_seconds(repo: Path, script: Path, chunk: int) -> list[float]:
    """Seconds per turn spent streaming (TurnStarted -> UsageReported)."""
    backend = ReplayBackend(script, chunk_size=chunk)
    session = Session(
        workspace=Workspace.open(repo), executor=Executor(repo), backend=backend,
        issue="bench", config=SessionConfig(dialect="text", max_steps=10_000),
    )
    marks: list[float] = []
    session.subscribe(lambda e: marks.append(time.perf_counter())
                      if type(e).__name__ in ("TurnStarted", "UsageReported") else None)
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    return [end - start for start, end in zip(marks[0::2], marks[1::2])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=8000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--chunk", type=int, default=4)
    args = parser.parse_args()
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "s.jsonl"
        script.write_text("".join(
            json.dumps({"output": reply(rng, args.chars, n)}) + "\n" for n in range(args.turns)
        ))
        shipped = session_module.RepetitionGuard
        guarded, bare = [], []
        for run in range(3):  # interleaved
            guarded += generation_seconds(make_repo(Path(tmp) / f"g{run}"), script, args.chunk)
            session_module.RepetitionGuard = NoGuard
            try:
                bare += generation_seconds(make_repo(Path(tmp) / f"b{run}"), script, args.chunk)
            finally:
                session_module.RepetitionGuard = shipped
    g, b = statistics.median(guarded), statistics.median(bare)
    chunks = args.chars // args.chunk
    print(f"reply of ~{args.chars} chars in {args.chunk}-char chunks (~{chunks} chunks), "
          f"{len(guarded)} turns each")
    print(f"{'':28}{'median s/turn':>14}{'us/chunk':>10}")
    print(f"{'session, no guard':28}{b:14.4f}{b / chunks * 1e6:10.1f}")
    print(f"{'session + RepetitionGuard':28}{g:14.4f}{g / chunks * 1e6:10.1f}")
    print(f"guard / no guard: {g / b:.2f}x")

    detector, observation = StuckDetector(), Observation(output="x" * 2000, exit_code=0)
    started = time.perf_counter()
    for n in range(2000):
        detector.executed(Bash(f"echo {n % 7}"), observation)
    per_step = (time.perf_counter() - started) / 2000
    print(f"StuckDetector.executed: {per_step * 1e6:.1f} us per step")


if __name__ == "__main__":
    main()
