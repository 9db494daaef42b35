"""The TUI under a live model's pace: tokens shown, display lag and key latency while a turn
streams with 50 earlier turns on screen; and the start screen's first frame with 100 logged
sessions.

    python bench/ui_stream.py [--rates 100,2000] [--seconds 4] [--earlier 50] [--runs 3]
                              [--sessions 100]

Streaming (the real path): `NavApp` in auto mode over a Session on a temporary git repo. A paced
backend answers `--earlier` short turns at once (each a step that runs `true`), then streams one
long thought at `--rate` tokens per second (4-character tokens, released on an absolute
schedule, so a slow consumer cannot slow the producer down), once the screen shows that turn's
title (it has caught up with the earlier ones). While that turn streams:

* shown/s: tokens that reached the screen per second, and the share of all tokens shown by the
  end of the turn (must be 100%);
* display lag: from the moment the backend yielded a token to the first frame that paints it
  (the turn's widget records how much of its text the compositor drew when it drew the text's
  last line; sampled every millisecond in the app's loop);
* key latency: a key (`d`, switch the diff tab) sent 20 ms after the previous one was handled,
  until its action runs; keys go on for a second after the turn, and the slowest of those is
  printed too (the step that follows runs then, and the collector's full pass, which waits
  while a turn streams).

Start screen: `navtui --script S REPO` in a 120x40 pseudo-terminal, with `--sessions` logs of
20 steps each in the repo (about 40 KB per step, as real logs), from spawn to the first frame
(the issue prompt) and to the session list, with the sessions index cold (logs never listed,
as after an upgrade) and warm, side by side with a repo that has no sessions.

Targets: every token shown, display lag p99 <= 100 ms, key latency p99 <= 50 ms at 100 and
2,000 tok/s; first frame <= 0.8 s with 100 sessions. Children run with PYTHONDONTWRITEBYTECODE
and everything is written under a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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


# --- the start screen with many logged sessions ------------------------------------------------


def log_sessions(repo: Path, count: int, steps: int) -> None:
    """`count` session logs of `steps` executed steps each (~40 KB of output per step)."""
    from agent_core.actions import Bash
    from agent_core.events import SessionFinished, SessionStarted, StepExecuted, StepProposed
    from agent_core.prompts import Turn, format_observation
    from agent_core.steps import Approve, Checkpoint, Observation, ProposedStep, StepRecord
    from agent_core.stored_turns import store_turn
    from agent_core.trajectory import TrajectoryWriter, default_path, repo_state_dir

    state = repo_state_dir(repo)
    output = "\n".join(f"tests/test_module_{i}.py::test_case_{i} PASSED [{i % 100:>3}%]" for i in range(700))
    for n in range(count):
        session_id = f"20260101-{n // 3600:02d}{n // 60 % 60:02d}{n % 60:02d}-{n:06x}"
        writer = TrajectoryWriter(default_path(state, session_id))
        writer(SessionStarted(session_id, f"Issue {n}: average is off by one", {"dialect": "toolcall"}))
        for index in range(1, steps + 1):
            action = Bash(f"pytest -q tests/ -k case_{index}")
            raw = f"Run the tests.\n<tool_call>\n{{\"name\": \"bash\", \"arguments\": {{\"command\": \"{action.command}\"}}}}\n</tool_call>"
            step = ProposedStep(thought="Run the tests.", action=action, raw=raw, dialect="toolcall")
            writer(StepProposed(index, step, action.command, None))
            observation = Observation(output, exit_code=0)
            record = StepRecord(index=index, proposed=step, decision=Approve(), action=action,
                                observation=observation, checkpoint=Checkpoint(index, "refs/x", "0" * 40, None, "main"),
                                diff="")
            store_turn(record, Turn(raw, format_observation("toolcall", action, observation)))
            writer(StepExecuted(record))
        writer(SessionFinished("quit", "quit by the user"))
        writer.close()


def first_frame(repo: Path, script: Path, marks: list[str]) -> list[float]:
    """Seconds from spawning `navtui --script S REPO` to each of `marks` on screen, in order."""
    import pexpect

    navtui = str(Path(sys.executable).with_name("navtui"))
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(repo.parent), "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.perf_counter()
    child = pexpect.spawn(navtui, ["--script", str(script), str(repo)], dimensions=(40, 120),
                          encoding="utf-8", timeout=60, env=env)
    times = []
    try:
        for mark in marks:
            child.expect(mark)
            times.append(time.perf_counter() - start)
        return times
    finally:
        child.sendcontrol("q")
        child.terminate(force=True)


def start_table(count: int, runs: int, work: Path) -> None:
    from agent_core.trajectory import SessionsIndex, repo_state_dir

    repo = make_repo(work / "sessions-repo")
    started = time.perf_counter()
    log_sessions(repo, count, steps=20)
    folder = repo_state_dir(repo) / "sessions"
    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    script = work / "start.jsonl"
    script.write_text(json.dumps({"output": "<tool_call>\n{\"name\": \"submit\", \"arguments\": {}}\n</tool_call>"}) + "\n")
    marks = ["What should the model fix", f"Issue {count - 1}: average"]
    print(f"\nstart screen: `navtui REPO` in a 120x40 pty with {count} logged sessions "
          f"({size / 1e6:.0f} MB of logs, written in {time.perf_counter() - started:.0f} s); medians of {runs}")
    print(f"{'sessions':<22} {'first frame s':>14} {'sessions shown s':>17}")
    empty = make_repo(work / "empty-repo")
    baseline = statistics.median(first_frame(empty, script, marks[:1])[0] for _ in range(runs))
    print(f"{'none (baseline)':<22} {baseline:>14.2f} {'-':>17}")
    for label in ("cold index", "warm index"):
        rows = []
        for _ in range(runs):
            if label == "cold index":
                (folder / SessionsIndex.NAME).unlink(missing_ok=True)
            rows.append(first_frame(repo, script, marks))
        frame = statistics.median(r[0] for r in rows)
        listed = statistics.median(r[1] for r in rows)
        print(f"{f'{count}, {label}':<22} {frame:>14.2f} {listed:>17.2f}   ({frame / baseline:.2f}x baseline)")
    print("target: first frame <= 0.8 s")
    from agent_core.trajectory import list_sessions

    timings: dict[str, list[float]] = {"cold": [], "warm": []}
    for _ in range(runs):
        for label in ("cold", "warm"):
            if label == "cold":
                (folder / SessionsIndex.NAME).unlink(missing_ok=True)
            started = time.process_time()
            listed = list_sessions(repo)
            timings[label].append(time.process_time() - started)
            assert len(listed) == count
    cold, warm = (statistics.median(timings[k]) * 1e3 for k in ("cold", "warm"))
    print(f"list_sessions in process (CPU ms): cold index {cold:.0f}, warm index {warm:.1f} "
          f"({cold / warm:.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="100,2000", help="tokens per second, comma-separated")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the streamed turn")
    parser.add_argument("--earlier", type=int, default=50, help="turns before the streamed one")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=100, help="logged sessions (0: skip)")
    options = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} CPUs (figures are only comparable at similar load)")
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        work = Path(tmp)
        rates = [float(r) for r in options.rates.split(",") if r]
        if rates:
            stream_table(rates, options.seconds, options.earlier, options.runs, work)
        if options.sessions:
            start_table(options.sessions, options.runs, work)


if __name__ == "__main__":
    main()
