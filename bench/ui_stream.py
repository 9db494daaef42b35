"""Streaming through the TUI: tokens/s rendered and key latency during the stream, side by side
with a naive widget that calls `Static.update` per token; and `navtui REPO` time to first frame.

    python bench/ui_stream.py [--tokens 20000] [--runs 5] [--naive-budget 30] [--hf-model DIR]

The app run is the real path: a Session on a temporary git repo whose replay backend streams one
turn of `--tokens` chunks (about one token each) at full speed; the session thread emits
TokenStreamed events, the app coalesces and renders them into the thought stream. The clock
runs from the session's TurnStarted to the moment the whole turn is rendered. While it streams,
a key (`d`, switch diff tab) is sent 20 ms after the previous one was handled and the time until
its action runs is recorded. The naive app gets the same tokens, one message each, and re-renders the whole text
per token; it is stopped after `--naive-budget` seconds if it has not finished.

Time to first frame: `navtui --script ... --issue ... REPO` in a pseudo-terminal, from spawn to
the first screen that shows the issue line. With `--hf-model DIR` (a local model directory, e.g.
the tiny test model from `python -m tests.tiny_model OUT`) it also times the hf backend, whose
model loads in a worker after the first frame.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual import events  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.containers import VerticalScroll  # noqa: E402
from textual.message import Message  # noqa: E402
from textual.widgets import Static  # noqa: E402

KEY_INTERVAL = 0.02
CHUNK = 4  # characters per streamed chunk: about one token of English text


def thinking_text(tokens: int) -> str:
    """About `tokens` tokens of model-like thinking: sentences, inline code, paragraphs."""
    sentence = "Looking at `average` in calc/ops.py the divisor adds one so the mean is low. "
    paragraph = sentence * 5 + "\n\n"
    return (paragraph * (tokens * CHUNK // len(paragraph) + 1))[: tokens * CHUNK]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "ops.py").write_text("def average(values):\n    return sum(values) / (len(values) + 1)\n")
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@navtui.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *identity, *args], cwd=root, check=True)
    return root


# --- the real app ---------------------------------------------------------------------------


async def run_app(tokens: int, workdir: Path) -> dict[str, float]:
    from agent_core.actions import Bash
    from agent_core.backends.replay import ReplayBackend
    from agent_core.events import TurnStarted
    from agent_core.executor import Executor
    from agent_core.formats import render
    from agent_core.session import Session, SessionConfig
    from agent_core.workspace import Workspace
    from app.tui import NavApp

    repo = make_repo(workdir / "repo")
    body = thinking_text(tokens)
    script = workdir / "script.jsonl"
    output = f"<think>\n{body}\n</think>\n" + render(Bash("ls"), "toolcall")
    script.write_text(json.dumps({"output": output}) + "\n")
    chunks = -(-len(output) // CHUNK)
    session = Session(
        workspace=Workspace.open(repo), executor=Executor(repo),
        backend=ReplayBackend(script, chunk_size=CHUNK), issue="bench", config=SessionConfig("toolcall"),
    )
    turn_started = threading.Event()
    started_at = [0.0]

    def on_event(event: object) -> None:
        if isinstance(event, TurnStarted):
            started_at[0] = time.perf_counter()
            turn_started.set()

    session.subscribe(on_event)
    app = NavApp(session, repo=repo)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.main is None or not turn_started.is_set():
            await pilot.pause(0.001)
        main = app.main
        start = started_at[0]
        handled = asyncio.Event()
        original = main.action_diff

        def timed_diff() -> None:
            latencies.append(time.perf_counter() - sent[0])
            original()
            handled.set()

        main.action_diff = timed_diff  # type: ignore[method-assign]
        sent = [0.0]
        while main.pending is None or main.query_one("#thoughts").rendering:
            handled.clear()
            sent[0] = time.perf_counter()
            app.post_message(events.Key("d", "d"))
            await asyncio.wait_for(handled.wait(), 10)
            await asyncio.sleep(KEY_INTERVAL)
        elapsed = time.perf_counter() - start
        rendered = main.query_one("#thoughts").text
        assert body.strip()[:200] in rendered, "the thought stream does not hold the streamed text"
    return {"tokens": chunks, "seconds": elapsed, "latencies": latencies}


def combine(runs: list[dict]) -> dict[str, float]:
    """Several app runs as one row: median duration, key latencies pooled."""
    latencies = [value for run in runs for value in run["latencies"]]
    seconds = statistics.median(run["seconds"] for run in runs)
    tokens = runs[0]["tokens"]
    return {"tokens": tokens, "seconds": seconds, "tok_s": tokens / seconds,
            "p50_ms": 1000 * percentile(latencies, 0.5), "p99_ms": 1000 * percentile(latencies, 0.99),
            "keys": len(latencies)}


# --- the naive widget -----------------------------------------------------------------------


class Token(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class NaiveApp(App[None]):
    """Re-renders the whole text with `Static.update` on every token."""

    BINDINGS = [("d", "ping", "ping")]

    def __init__(self, chunks: list[str]) -> None:
        super().__init__()
        self.chunks = chunks
        self.text = ""
        self.received = 0
        self.pinged = asyncio.Event()

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="text")

    def produce(self) -> None:
        for chunk in self.chunks:
            self.post_message(Token(chunk))

    def on_token(self, message: Token) -> None:
        self.text += message.text
        self.received += 1
        self.query_one("#text", Static).update(self.text)
        self.query_one(VerticalScroll).scroll_end(animate=False)

    def action_ping(self) -> None:
        self.pinged.set()


async def run_naive(tokens: int, budget: float) -> dict[str, float]:
    body = thinking_text(tokens)
    chunks = [body[i:i + CHUNK] for i in range(0, len(body), CHUNK)]
    app = NaiveApp(chunks)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        threading.Thread(target=app.produce, daemon=True).start()
        start = time.perf_counter()
        while app.received < len(chunks) and time.perf_counter() - start < budget:
            app.pinged.clear()
            sent = time.perf_counter()
            app.post_message(events.Key("d", "d"))
            try:
                await asyncio.wait_for(app.pinged.wait(), budget)
            except TimeoutError:
                break
            latencies.append(time.perf_counter() - sent)
            await asyncio.sleep(KEY_INTERVAL)
        await pilot.pause()
        elapsed = time.perf_counter() - start
        received = app.received
    return {"tokens": received, "seconds": elapsed, "tok_s": received / elapsed,
            "p50_ms": 1000 * percentile(latencies, 0.5), "p99_ms": 1000 * percentile(latencies, 0.99),
            "keys": len(latencies), "finished": received == len(chunks)}


# --- time to first frame --------------------------------------------------------------------


def first_frame(args: list[str], repo: Path, expect: str, then: str | None = None) -> tuple[float, float | None]:
    """Seconds from spawning `navtui ARGS REPO` to the first frame showing `expect`, and to `then`."""
    import pexpect

    navtui = str(Path(sys.executable).with_name("navtui"))
    start = time.perf_counter()
    child = pexpect.spawn(navtui, [*args, str(repo)], dimensions=(40, 120), encoding="utf-8",
                          timeout=120, env={"TERM": "xterm-256color", "PATH": "/usr/bin:/bin",
                                            "HOME": str(Path.home())})
    try:
        child.expect(expect)
        frame = time.perf_counter() - start
        later = None
        if then:
            child.expect(then)
            later = time.perf_counter() - start
        return frame, later
    finally:
        child.sendcontrol("c")
        child.terminate(force=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5, help="app runs (key latencies are pooled)")
    parser.add_argument("--naive-budget", type=float, default=30.0, help="seconds before the naive run is cut")
    parser.add_argument("--hf-model", help="local model directory to time the hf backend's first frame")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        work = Path(tmp)
        app = combine([asyncio.run(run_app(options.tokens, work / f"app{n}")) for n in range(options.runs)])
        naive = asyncio.run(run_naive(options.tokens, options.naive_budget))

        print(f"streaming {options.tokens} tokens at full speed, a key every {KEY_INTERVAL * 1000:.0f} ms "
              f"(navtui: median of {options.runs} runs, keys pooled)")
        print(f"{'':28}{'tokens':>8}{'seconds':>9}{'tok/s':>9}{'key p50 ms':>12}{'key p99 ms':>12}{'keys':>6}")
        for name, row in (("navtui (MarkdownStream)", app), ("naive Static.update/token", naive)):
            print(f"{name:28}{row['tokens']:>8.0f}{row['seconds']:>9.2f}{row['tok_s']:>9.0f}"
                  f"{row['p50_ms']:>12.1f}{row['p99_ms']:>12.1f}{row['keys']:>6.0f}")
        if not naive["finished"]:
            print(f"  (naive run cut after {options.naive_budget:.0f} s; its rate is over the tokens it got to)")
        print(f"ratio tok/s navtui / naive: {app['tok_s'] / naive['tok_s']:.1f}x   "
              f"(targets: >= 2000 tok/s, p99 <= 50 ms, >= 5x naive)")

        repo = make_repo(work / "ttff")
        script = work / "ttff.jsonl"
        script.write_text(json.dumps({"output": "<tool_call>\n{\"name\": \"bash\", \"arguments\": "
                                                "{\"command\": \"ls\"}}\n</tool_call>"}) + "\n")
        issue = ["--issue", "Average is off by one"]
        rows = []
        frame, proposal = first_frame(["--script", str(script), *issue], repo, "Average is off", "waiting")
        rows.append(("replay", frame, proposal))
        if options.hf_model:
            frame, proposal = first_frame(["--backend", "hf", "--model", options.hf_model, "--dialect", "toolcall",
                                           "--max-steps", "1", *issue], repo, "Average is off", "Step 1")
            rows.append(("hf " + Path(options.hf_model).name, frame, proposal))
        print("\n`navtui REPO` in a 120x40 pty (target: first frame <= 1.0 s; the model loads after it)")
        print(f"{'backend':28}{'first frame s':>14}{'model turn s':>14}")
        for name, frame, later in rows:
            print(f"{name:28}{frame:>14.2f}{later if later is not None else float('nan'):>14.2f}")


if __name__ == "__main__":
    main()
