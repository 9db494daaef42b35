"""The TUI under a live model's pace, measured from outside: the real `navtui` in a real
pseudo-terminal, beside three anchors streaming the same text at the same pace in the same run;
and the start screen's first frame with 100 logged sessions; with --hunks N, keys while an edit
proposal of N hunks waits.

    python bench/ui_stream.py [--rates 100,2000] [--seconds 4] [--earlier 50] [--runs 3]
                              [--sessions 100] [--in-process] [--only navtui,rich-live,...]
                              [--hunks 300]

Every program reads the same OpenAI-compatible stream from `feed.Feed` (127.0.0.1): `navtui
--backend openai` gets `--earlier` short turns at once (each a step that runs `true`; `t` turns
auto mode on) and then, once its screen shows that turn's title, one long thought at `--rate`
tokens per second; each anchor (bench/anchors/) gets the long thought alone:

* rich-live: a `rich.live.Live` at 60 frames a second, plain text (no framework: the floor);
* textual-log: a Textual `Log`;
* textual-md: a Textual `Markdown` fed through `MarkdownStream`.

The program runs in a 120x40 pty; the bench reads what it writes on a thread of its own and
keeps the screen with pyte (`terminal.Terminal`). Nothing is timed inside the program.

* display lag: the text carries a marker word every few tokens (`m00042`); lag is from the
  moment the server sent the token that completes a marker to the first read of the terminal
  in which the marker is on screen (a marker scrolled past unseen counts until a later one
  was seen);
* key -> screen: `d` written to the terminal as bytes, 20 ms after the previous key's effect,
  until the screen shows its effect (navtui: the lower pane switches between the step and the
  session diff; anchors: a `keys: N` line counts it), while the turn streams.

Ratios are against rich-live measured in the same run (interleaved: one run of every program,
then the next run). With --in-process the old in-process figures (`ui_stream_inprocess.py`,
`run_test()`, no terminal) are printed as a second column. The load average is printed before
and after: the machine is shared, so compare ratios, not milliseconds.
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
import time
from pathlib import Path

os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.dont_write_bytecode = True
BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from feed import CHUNK, Feed  # noqa: E402
from terminal import Terminal, child_env, marker  # noqa: E402

KEY_INTERVAL = 0.02
AFTER_TURN = 1.0  # keys are timed this long after the turn too (its step runs then)
PROGRAMS = ("navtui", "rich-live", "textual-log", "textual-md")
ANCHOR_SCRIPTS = {"rich-live": "rich_live.py", "textual-log": "textual_log.py",
                  "textual-md": "textual_markdown.py"}
NAVTUI_TABS = ("This step changed no file.", "No changes yet.")  # what `d` alternates between


def marked_text(tokens: int) -> tuple[str, list[int]]:
    """About `tokens` tokens of model-like thinking in lines under 80 characters (a Textual `Log`
    does not wrap), with a marker word every ~8 tokens; returns the text and where each marker
    ends."""
    parts: list[str] = []
    ends: list[int] = []
    length = 0
    n = 0

    def add(template: str) -> None:
        nonlocal length, n
        pieces = template.split("{m}")
        for i, piece in enumerate(pieces):
            parts.append(piece)
            length += len(piece)
            if i < len(pieces) - 1:
                word = marker(n)
                parts.append(word)
                length += len(word)
                ends.append(length)
                n += 1

    while length < tokens * CHUNK:
        add("Looking at `average` {m} in calc/ops.py the divisor {m} adds one so {m}\n")
        add("the mean is low; {m} the tests in **test_ops.py** {m} say so too, and {m}\n")
        add("`len(values)` is {m} what it should divide by, {m} not one more.\n\n")
        add("- check `len(values)` {m} first\n- run {m} the tests\n\n")
    return "".join(parts), ends


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


def navtui_command(repo: Path, base_url: str, steps: int, tokens: int) -> list[str]:
    return [str(Path(sys.executable).with_name("navtui")), "--backend", "openai", "--base-url", base_url,
            "--model", "bench", "--dialect", "toolcall", "--sandbox", "off", "--max-steps", str(steps),
            "--max-new-tokens", str(tokens), "--issue", "bench: average is off by one", str(repo)]


def quick_turns(earlier: int) -> list[str]:
    from agent_core.actions import Bash
    from agent_core.formats import render

    return [render(Bash("true"), "toolcall", f"Step {n}: checking **ops.py** again, `line {n}`.\n\n- a\n- b")
            for n in range(earlier)]


def one_run(program: str, rate: float, seconds: float, earlier: int, work: Path,
            profile: Path | None = None) -> dict:
    """Stream one turn into `program` in a pty; lags and key latencies in seconds. With
    `profile`, py-spy samples the program while the turn streams (raw collapsed stacks)."""
    from agent_core.actions import Bash
    from agent_core.formats import render

    body, ends = marked_text(int(rate * seconds))
    work.mkdir(parents=True)
    if program == "navtui":
        feed = Feed(f"{body}\n" + render(Bash("true"), "toolcall"), rate, quick_turns(earlier))
        tokens = len(feed.long) // CHUNK + 64
        command = navtui_command(make_repo(work / "repo"), feed.base_url, earlier + 5, tokens)
        effects = [NAVTUI_TABS[n % 2] for n in range(100_000)]
    else:
        feed = Feed(body, rate)
        command = [sys.executable, str(BENCH / "anchors" / ANCHOR_SCRIPTS[program]), feed.base_url]
        effects = [f"keys: {n + 1}" for n in range(100_000)]
    terminal = Terminal(command, env=child_env(work), cwd=work)
    latencies: list[float] = []
    after: list[float] = []
    try:
        if program == "navtui":
            terminal.wait_for("Step 1", 60)
            terminal.press(b"t", "Auto mode on", 30)
            terminal.wait_for(f"Step {earlier + 1}", 120)
            while feed.requests <= earlier:
                time.sleep(0.01)
        else:
            terminal.wait_for("keys: 0", 60)
        time.sleep(0.3)
        spy = None
        if profile is not None:
            spy = subprocess.Popen(["py-spy", "record", "--pid", str(terminal.child.pid), "--threads",
                                    "--format", "raw", "--rate", "200", "--duration", f"{seconds:.0f}",
                                    "--output", str(profile)], stdout=subprocess.DEVNULL)
        feed.go.set()
        pressed = 0
        record = latencies
        ended_at: float | None = None
        while True:
            if feed.paced_done.is_set() and ended_at is None:
                ended_at, record = time.monotonic(), after
            if ended_at is not None and time.monotonic() > ended_at + AFTER_TURN:
                break
            record.append(terminal.press(b"d", effects[pressed]))
            pressed += 1
            time.sleep(KEY_INTERVAL)
        time.sleep(0.3)  # the last markers
        seen = dict(terminal.markers_seen)
        if spy is not None:
            spy.wait(60)
    finally:
        terminal.close()
        feed.stop()
    sent = feed.emitted[-1][1] if feed.emitted else 0
    if sent < len(body):
        raise RuntimeError(f"{program} read {sent} of the turn's {len(body)} characters")
    lags: list[float] = []
    unseen = 0
    shown_by = float("inf")
    for n in range(len(ends) - 1, -1, -1):  # a marker never drawn counts until a later one was
        if n in seen:
            shown_by = min(shown_by, seen[n])
        else:
            unseen += 1
        if shown_by != float("inf"):
            lags.append(shown_by - feed.emitted_at(ends[n] - 1))
    return {"lags": lags, "markers": len(ends), "unseen": unseen, "latencies": latencies,
            "after": after}


def stream_table(rates: list[float], seconds: float, earlier: int, runs: int, programs: list[str],
                 in_process: bool, work: Path) -> None:
    print(f"one turn streamed for ~{seconds:g} s into each program in a 120x40 pty "
          f"(navtui with {earlier} earlier turns on screen); {runs} runs per rate, interleaved, "
          "samples pooled; milliseconds")
    header = (f"{'rate':>5} {'program':<12} {'lag p50':>8} {'lag p99':>8} {'key p50':>8} {'key p99':>8} "
              f"{'keys':>5} {'unseen':>7} {'after max':>9}  {'lag/rl':>6} {'key/rl':>6}")
    if in_process:
        header += f"  {'in-proc lag p99':>15} {'in-proc key p99':>15}"
    print(header)
    for rate in rates:
        pooled: dict[str, dict[str, list[float]]] = {p: {"lags": [], "latencies": [], "after": []}
                                                     for p in programs}
        unseen = {p: [0, 0] for p in programs}
        for run in range(runs):
            for program in programs:
                result = one_run(program, rate, seconds, earlier, work / f"{program}-{rate:g}-{run}")
                for key in ("lags", "latencies", "after"):
                    pooled[program][key].extend(result[key])
                unseen[program][0] += result["unseen"]
                unseen[program][1] += result["markers"]
        inproc = in_process_figures(rate, seconds, earlier, runs, work) if in_process else None
        floor = pooled.get("rich-live")
        for program in programs:
            values = pooled[program]
            lag99, key99 = percentile(values["lags"], 0.99), percentile(values["latencies"], 0.99)
            ratios = f"  {'-':>6} {'-':>6}"
            if floor:
                ratios = (f"  {lag99 / percentile(floor['lags'], 0.99):>5.2f}x "
                          f"{key99 / percentile(floor['latencies'], 0.99):>5.2f}x")
            line = (f"{rate:>5.0f} {program:<12} {percentile(values['lags'], 0.5) * 1e3:>8.1f} "
                    f"{lag99 * 1e3:>8.1f} "
                    f"{percentile(values['latencies'], 0.5) * 1e3:>8.1f} {key99 * 1e3:>8.1f} "
                    f"{len(values['latencies']):>5} {unseen[program][0] / max(unseen[program][1], 1):>7.1%} "
                    f"{max(values['after'], default=float('nan')) * 1e3:>9.1f}{ratios}")
            if inproc and program == "navtui":
                line += f"  {inproc[0] * 1e3:>15.1f} {inproc[1] * 1e3:>15.1f}"
            print(line, flush=True)
    print("targets: navtui lag p99 and key p99 <= 1.5x rich-live (lag/rl, key/rl); 'unseen': markers "
          f"never on screen; 'after max': slowest key in the {AFTER_TURN:g} s after the turn (no target)")


def in_process_figures(rate: float, seconds: float, earlier: int, runs: int, work: Path) -> tuple[float, float]:
    """(lag p99, key p99) from `ui_stream_inprocess` (the app's own loop, no terminal)."""
    from ui_stream_inprocess import stream_run

    results = [asyncio.run(stream_run(rate, seconds, earlier, work / f"inproc-{rate:g}-{n}"))
               for n in range(runs)]
    return (percentile([lag for r in results for lag in r["lags"]], 0.99),
            percentile([lat for r in results for lat in r["latencies"]], 0.99))


# --- an edit proposal of many hunks ----------------------------------------------------------


def hunk_run(hunks: int, seconds: float, work: Path) -> dict:
    """navtui (ask mode) with an edit proposal of `hunks` hunks waiting: seconds from approving
    the step before it to its diff preview on the card (and, where navtui lists hunks, to the
    list), then key -> screen of `d` (output, step diff, session diff) and, with hunks listed, of
    `]` (the next hunk marked) for `seconds` each."""
    from agent_core.actions import Bash, StrReplaceEditor
    from agent_core.formats import render

    old = "".join(f"v{n}\n" for n in range(8 * hunks))
    new = "".join(f"v{n}{'.0' if n % 8 == 4 else ''}\n" for n in range(8 * hunks))
    repo = make_repo(work / "repo")
    (repo / "values.py").write_text(old)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "values")
    turns = [render(Bash("printf 'OUT%s\\n' MARK"), "toolcall", "First."),
             render(StrReplaceEditor("str_replace", "values.py", old_str=old, new_str=new), "toolcall",
                    "Make every eighth value a float.")]
    feed = Feed("", 1.0, turns)
    command = navtui_command(repo, feed.base_url, 5, len(turns[1]) // CHUNK + 256)
    terminal = Terminal(command, env=child_env(work), cwd=work)
    result: dict = {"d": [], "]": []}
    try:
        terminal.wait_for("Approve", 60)
        approved = time.monotonic()
        os.write(terminal.child.child_fd, b"a")
        result["preview"] = terminal.wait_for("@@ -", 120) - approved
        try:
            result["listed"] = terminal.wait_for(f"hunk 1/{hunks}", 10) - approved
        except TimeoutError:
            result["listed"] = None
        time.sleep(0.3)
        effects = ["This step changed no file.", "No changes yet.", "OUTMARK"]
        for key, shows in ((b"d", lambda n: effects[n % 3]),
                           (b"]", lambda n: f"\u25b6 hunk {n + 2}/{hunks}")):
            if key == b"]" and result["listed"] is None:
                break
            ends = time.monotonic() + seconds
            n = 0
            while time.monotonic() < ends and n < hunks - 1:
                result[key.decode()].append(terminal.press(key, shows(n)))
                n += 1
                time.sleep(KEY_INTERVAL)
    finally:
        terminal.close()
        feed.stop()
    return result


def hunk_table(hunks: int, seconds: float, runs: int, work: Path) -> None:
    print(f"\nan edit proposal of {hunks} hunks waiting in a 120x40 pty; {runs} run(s), samples "
          "pooled; milliseconds")
    print(f"{'preview':>8} {'listed':>8} {'d p50':>7} {'d p99':>7} {'d keys':>6} {'] p50':>7} "
          f"{'] p99':>7} {'] keys':>6}")
    pooled: dict = {"preview": [], "listed": [], "d": [], "]": []}
    for run in range(runs):
        result = hunk_run(hunks, seconds, work / f"hunks-{run}")
        pooled["preview"].append(result["preview"])
        if result["listed"] is not None:
            pooled["listed"].append(result["listed"])
        pooled["d"] += result["d"]
        pooled["]"] += result["]"]

    def ms(values: list[float], q: float) -> str:
        return f"{percentile(values, q) * 1e3:.1f}" if values else "-"

    print(f"{ms(pooled['preview'], 0.5):>8} {ms(pooled['listed'], 0.5):>8} {ms(pooled['d'], 0.5):>7} "
          f"{ms(pooled['d'], 0.99):>7} {len(pooled['d']):>6} {ms(pooled[']'], 0.5):>7} "
          f"{ms(pooled[']'], 0.99):>7} {len(pooled[']']):>6}")


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


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="100,2000", help="tokens per second, comma-separated")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the streamed turn")
    parser.add_argument("--earlier", type=int, default=50, help="navtui's turns before the streamed one")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default=",".join(PROGRAMS), help="programs to run, comma-separated")
    parser.add_argument("--in-process", action="store_true", help="add the in-process figures")
    parser.add_argument("--sessions", type=int, default=100, help="logged sessions (0: skip)")
    parser.add_argument("--hunks", type=int, default=0,
                        help="also time keys with an edit proposal of this many hunks waiting")
    parser.add_argument("--profile", metavar="FILE",
                        help="only py-spy navtui at the first rate into FILE (collapsed stacks) and stop")
    options = parser.parse_args()
    if options.profile:
        with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
            rate = float(options.rates.split(",")[0])
            one_run("navtui", rate, options.seconds, options.earlier, Path(tmp) / "run", Path(options.profile))
        print(f"py-spy samples of navtui at {rate:g} tok/s (load {load()}) in {options.profile}")
        return
    print(f"load average {load()} on {os.cpu_count()} CPUs (a shared machine: compare the ratios)")
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        work = Path(tmp)
        rates = [float(r) for r in options.rates.split(",") if r]
        programs = [p for p in options.only.split(",") if p]
        if rates:
            stream_table(rates, options.seconds, options.earlier, options.runs, programs,
                         options.in_process, work)
            print(f"load average after: {load()}")
        if options.hunks:
            hunk_table(options.hunks, options.seconds, options.runs, work)
        if options.sessions:
            start_table(options.sessions, options.runs, work)


if __name__ == "__main__":
    main()
