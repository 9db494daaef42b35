"""The second column of `ui_stream.py`: the same streaming measured inside the app (in-process,
`App.run_test()`: the headless driver never writes a frame to a terminal). Kept to show how far
in-process figures are from what a user sees; `ui_stream.py` measures from outside.

    python bench/ui_stream_inprocess.py [--rates 100,2000] [--seconds 4] [--earlier 50] [--runs 3]

`NavApp` in auto mode over a Session on a temporary git repo; a paced backend answers
`--earlier` short turns at once, then streams one long thought at `--rate` tokens per second.
Display lag: from the backend's yield to the first frame the compositor painted it in (the
turn's widget records it; sampled every millisecond in the app's loop). Key latency: a `Key`
event posted into the app's queue until the action runs (no terminal, no input parsing, no
frame written).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402

from agent_core.backends.base import Backend, Prompt, Usage  # noqa: E402
from agent_core.backends.replay import ScriptExhausted  # noqa: E402
from agent_core.backends.token_estimate import estimate_prompt_tokens  # noqa: E402

KEY_INTERVAL = 0.02
AFTER_TURN = 1.0  # keys are timed this long after the turn too (its step; deferred collection)
CHUNK = 4  # characters per token


def thinking_text(tokens: int) -> str:
    """About `tokens` tokens of model-like thinking: sentences, inline code, paragraphs, lists."""
    sentence = "Looking at `average` in calc/ops.py the divisor adds one so the mean is low. "
    paragraph = sentence * 4 + "\n\n- check `len(values)`\n- run the tests\n\n"
    return (paragraph * (tokens * CHUNK // len(paragraph) + 1))[: tokens * CHUNK]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@navtui.invalid"]
    subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True)


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "ops.py").write_text("def average(values):\n    return sum(values) / (len(values) + 1)\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


class PacedBackend(Backend):
    """Answers the first turns at once, then streams `long` at `rate` tokens/s, recording when
    each token was yielded: (seconds, characters of the turn yielded so far)."""

    name = "paced"

    def __init__(self, quick: list[str], long: str, rate: float) -> None:
        self.outputs = [*quick, long, long]
        self.paced_turn = len(quick)
        self.rate = rate
        self.turn = 0
        self.emitted: list[tuple[float, int]] = []
        self.go = threading.Event()  # set by the bench once the screen has caught up
        self.release = threading.Event()  # the turn after the paced one waits for it
        self.last_usage: Usage | None = None
        self._cancelled = threading.Event()

    def stream(self, prompt: Prompt):
        if self.turn >= len(self.outputs):
            raise ScriptExhausted("the bench's turns are used up")
        output, paced = self.outputs[self.turn], self.turn == self.paced_turn
        self.turn += 1
        self._cancelled.clear()
        self.last_usage = Usage(prompt_tokens=estimate_prompt_tokens(prompt))
        if self.turn - 1 > self.paced_turn:
            self.release.wait(120)  # keep the session (and the main screen) up until measured
            return
        if not paced:
            yield output
            return
        self.go.wait(120)
        start = time.perf_counter()
        for i in range(0, len(output), CHUNK):
            due = start + (i // CHUNK) / self.rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            if self._cancelled.is_set():
                return
            self.emitted.append((time.perf_counter(), i + CHUNK))
            yield output[i : i + CHUNK]

    def cancel(self) -> None:
        self._cancelled.set()
        self.release.set()

    def count_tokens(self, prompt: Prompt) -> int:
        return estimate_prompt_tokens(prompt)

    def close(self) -> None:
        self.cancel()


async def stream_run(rate: float, seconds: float, earlier: int, workdir: Path) -> dict:
    from agent_core.actions import Bash
    from agent_core.events import TurnStarted
    from agent_core.executor import Executor
    from agent_core.formats import render
    from agent_core.session import Session, SessionConfig
    from agent_core.workspace import Workspace
    from app.tui import NavApp

    repo = make_repo(workdir / "repo")
    quick = [
        render(Bash("true"), "toolcall", f"Step {n}: checking **ops.py** again, `line {n}`.\n\n- a\n- b")
        for n in range(earlier)
    ]
    body = thinking_text(int(rate * seconds))
    long = f"{body}\n" + render(Bash("true"), "toolcall")
    backend = PacedBackend(quick, long, rate)
    session = Session(
        workspace=Workspace.open(repo), executor=Executor(repo), backend=backend,
        issue="bench: average is off by one",
        config=SessionConfig("toolcall", max_steps=earlier + 5, context_window=1_000_000),
    )
    long_started = threading.Event()
    session.subscribe(
        lambda e: long_started.set() if isinstance(e, TurnStarted) and e.index == earlier + 1 else None
    )
    app = NavApp(session, repo=repo, auto=True)
    latencies: list[float] = []
    after_turn: list[float] = []
    shown_at: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.main is None or not long_started.is_set():
            await pilot.pause(0.005)
        main = app.main
        thoughts = main.query_one("#thoughts")
        title = f"Step {earlier + 1}"
        while not any(str(w.render()) == title for w in thoughts.query(".turn-title")):
            await pilot.pause(0.005)  # the screen has shown every earlier turn
        await pilot.pause(0.2)
        backend.go.set()
        while not backend.emitted:
            await asyncio.sleep(0.001)
        total = len(body) // CHUNK  # the thought's tokens: the tool call goes to the card, not the stream
        finished = asyncio.Event()

        turn = thoughts.live  # the paced turn's text, as painted

        async def watch() -> None:
            """Record when each token (all its characters) was first in a painted frame, until
            all are or the turn is over."""
            shown = 0
            while shown < total and not finished.is_set():
                painted = turn.painted_length
                now = time.perf_counter()
                while shown < total and (shown + 1) * CHUNK <= painted and shown < len(backend.emitted):
                    shown_at.append(now)
                    shown += 1
                await asyncio.sleep(0.001)

        watcher = asyncio.create_task(watch())
        handled = asyncio.Event()
        sent = [0.0]
        record = [latencies]
        original = main.action_diff

        def timed_diff() -> None:
            record[0].append(time.perf_counter() - sent[0])
            original()
            handled.set()

        async def press() -> None:
            handled.clear()
            sent[0] = time.perf_counter()
            app.post_message(events.Key("d", "d"))
            await asyncio.wait_for(handled.wait(), 60)
            await asyncio.sleep(KEY_INTERVAL)

        main.action_diff = timed_diff  # type: ignore[method-assign]
        deadline = time.perf_counter() + seconds * 3 + 10
        while not watcher.done() and time.perf_counter() < deadline:
            await press()
        finished.set()
        await watcher
        record[0] = after_turn  # the step that follows the turn, and what the turn left to do
        until = time.perf_counter() + AFTER_TURN
        while time.perf_counter() < until:
            await press()
        main.action_diff = original  # type: ignore[method-assign]
        app.exit()
    backend.release.set()
    emitted = backend.emitted
    lags = [shown - emitted[i][0] for i, shown in enumerate(shown_at)]
    span = (shown_at[-1] - emitted[0][0]) if shown_at else float("nan")
    return {
        "tokens": total, "shown": len(shown_at), "shown_per_s": len(shown_at) / span,
        "emitted_per_s": len(emitted) / (emitted[-1][0] - emitted[0][0]),
        "lags": lags, "latencies": latencies, "after_turn": after_turn,
    }


def stream_table(rates: list[float], seconds: float, earlier: int, runs: int, work: Path) -> None:
    print(f"streaming one turn for ~{seconds:g} s with {earlier} earlier turns on screen "
          f"(navtui in auto mode, 120x40; {runs} runs per rate, samples pooled)")
    print(f"{'rate tok/s':>10} {'emitted/s':>10} {'shown/s':>9} {'shown':>7} {'lag p50':>8} {'lag p99':>8} "
          f"{'key p50':>8} {'key p99':>8} {'keys':>5} {'after max':>10}")
    for rate in rates:
        results = [
            asyncio.run(stream_run(rate, seconds, earlier, work / f"stream-{rate:g}-{n}"))
            for n in range(runs)
        ]
        lags = [lag for r in results for lag in r["lags"]]
        keys = [lat for r in results for lat in r["latencies"]]
        shown = sum(r["shown"] for r in results) / sum(r["tokens"] for r in results)
        print(
            f"{rate:>10.0f} {statistics.median(r['emitted_per_s'] for r in results):>10.0f} "
            f"{statistics.median(r['shown_per_s'] for r in results):>9.0f} {shown:>7.1%} "
            f"{percentile(lags, 0.5) * 1e3:>8.1f} {percentile(lags, 0.99) * 1e3:>8.1f} "
            f"{percentile(keys, 0.5) * 1e3:>8.1f} {percentile(keys, 0.99) * 1e3:>8.1f} {len(keys):>5} "
            f"{max((lat for r in results for lat in r['after_turn']), default=float('nan')) * 1e3:>10.1f}"
        )
    print("targets: shown 100%, display lag p99 <= 100 ms, key p99 <= 50 ms (ms columns); 'after max':\n"
          f"the slowest key in the {AFTER_TURN:g} s after the turn (its step runs; no target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="100,2000", help="tokens per second, comma-separated")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the streamed turn")
    parser.add_argument("--earlier", type=int, default=50, help="turns before the streamed one")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} CPUs (figures are only comparable at similar load)")
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        work = Path(tmp)
        rates = [float(r) for r in options.rates.split(",") if r]
        stream_table(rates, options.seconds, options.earlier, options.runs, work)


if __name__ == "__main__":
    main()
