"""Per-step overhead of navtui on a 10,000-file, ~40 MB repository, against plain baselines.

Part 1, whole sessions, from outside: the same scripted session (bash commands and editor
actions, rendered as the navigator model writes them; `--script`, `--sandbox off`) run by the
real CLI in a 120x40 pseudo-terminal (`terminal.Terminal`): `navtui --auto` (headless, its
transcript drawn in the terminal) until it exits, and `navtui` (the TUI; `t` turns auto mode on
at the first step) until its finish screen is drawn, alternately on fresh copies of the
repository. Each also runs a one-step (submit-only) session; per-step cost = (time of the long
session - time of the one-step session) / (its steps - 1), so start-up is left out, and the
one-step session's time is printed as start-up. Target: TUI <= 1.3x headless per step. The
in-process figures (`Session.run(AutoPolicy())` with log and transcript, and `NavApp` under
`run_test()`, whose headless driver never writes a frame) are printed beside them as a second
column (`--in-process-runs 0` skips them).

Part 2, one step's parts, interleaved step by step on two identical copies:

* navtui: `Executor.execute(action)` (persistent bash, file tools) + `Workspace.checkpoint` +
  `Workspace.step_diff`, on copy A;
* baseline: `subprocess.run(cmd, shell=True)` for each bash command and `git stash create` per
  step, on copy B (non-bash actions are applied there too, untimed, so both trees evolve alike).

Run: `python bench/step_overhead.py [--files 10000] [--actions 200] [--session-steps 200]
[--runs 2] [--in-process-runs 1] [--seed 7]` (everything under a temporary directory; no
bytecode written).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import sys
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_core.actions import Action, Bash, Edit, Read, Search, StrReplaceEditor, Submit  # noqa: E402
from agent_core.executor import Executor  # noqa: E402
from agent_core.workspace import Workspace  # noqa: E402
from terminal import Terminal, child_env  # noqa: E402

BUILTINS = {"echo", "printf", "cd", "true", "pwd", "export"}
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@navtui.invalid", "-c", "gc.auto=0"]


def generate_repo(root: Path, n_files: int) -> list[str]:
    """A committed, packed repo of `n_files` ~4 KB Python files in 100-file directories."""
    root.mkdir(parents=True)
    names = []
    for i in range(n_files):
        name = f"pkg{i // 1000:02d}/mod{i // 100 % 10}/file{i:05d}.py"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'"""Module {i}."""\n\n\ndef f{i}(x):\n    return x + {i}\n\n\n'
            f"class C{i}:\n    value = {i % 97}\n"
            + "".join(
                f"\n\ndef helper_{i}_{k}(items, scale={k}):\n"
                f'    """Scale each item of `items` by {k} and keep the positive ones."""\n'
                f"    result = [item * scale for item in items]\n"
                f"    return [value for value in result if value > {i % 13}]\n"
                for k in range(20)
            )
        )
        names.append(name)
    (root / ".gitignore").write_text("*.pyc\n__pycache__/\nbuild/\n")
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "generated"], cwd=root, check=True)
    subprocess.run([*GIT, "repack", "-a", "-d", "-q"], cwd=root, check=True)  # as a clone would be
    return names


def copy_repo(template: Path, target: Path) -> None:
    """A copy of `template` whose index is as git leaves a user's: `cp -a` gives every file a
    new inode and ctime, so the copy's first `git status` would re-hash every file (~0.4 s at
    10,000 files), a cost a repository git itself wrote never has."""
    subprocess.run(["cp", "-a", str(template), str(target)], check=True)
    subprocess.run([*GIT, "update-index", "-q", "--refresh"], cwd=target, check=True)


def make_actions(names: list[str], count: int, seed: int) -> list[Action]:
    """A reproducible mix: half bash (reads and writes), the rest file tools and search."""
    rng = random.Random(seed)
    actions: list[Action] = []
    for step in range(count):
        name = rng.choice(names)
        folder = name.rsplit("/", 1)[0]
        number = int(name[-8:-3])
        roll = rng.random()
        if roll < 0.5:
            actions.append(Bash(rng.choice([
                f"ls {folder} | head -5",
                f"grep -n 'return' {name}",
                f"wc -l {name}",
                f"sed -i 's/x + {number}/x - {number}/' {name}",
                f"echo '# note {step}' >> {name}",
                f"printf 'print({step})\\n' > {folder}/new_{step}.py",
                f"mkdir -p build && echo {step} > build/out{step}.txt",
                f"cat {name} | tail -2",
            ])))
        elif roll < 0.65:
            actions.append(Read(name))
        elif roll < 0.75:
            actions.append(Search(f"C{number}", folder))
        elif roll < 0.9:
            actions.append(Edit(name, 4, 5, f"def f{number}(x):\n    return x * {step}\n"))
        else:
            actions.append(StrReplaceEditor(
                "str_replace", name, old_str=f"value = {number % 97}", new_str=f"value = {step}"
            ))
    return actions


def starts_programs(command: str) -> bool:
    """False for commands bash runs without forking (a lone builtin with a redirection)."""
    return command.split()[0] not in BUILTINS or any(op in command for op in ("|", "&&", ";"))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def summary(values: list[float]) -> tuple[float, float]:
    """(median, p95) in milliseconds."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def row(label: str, values: list[float]) -> str:
    median, p95 = summary(values)
    return f"  {label:<44} {median:9.2f} {p95:9.2f}"


def ratio_row(label: str, ours: list[float], base: list[float]) -> str:
    (om, op), (bm, bp) = summary(ours), summary(base)
    return f"  {label:<44} {om / bm:8.2f}x {op / bp:8.2f}x"


def session_actions(names: list[str], count: int, seed: int) -> list[Action]:
    """Actions the navigator model can write (bash and str_replace_editor), ending in submit."""
    rng = random.Random(seed)
    actions: list[Action] = []
    for step in range(count):
        name = rng.choice(names)
        number = int(name[-8:-3])
        roll = rng.random()
        if roll < 0.6:
            actions.append(Bash(rng.choice([
                f"grep -n 'return' {name} | head -5",
                f"sed -i 's/x + {number}/x - {number}/' {name}",
                f"echo '# note {step}' >> {name}",
                f"ls {name.rsplit('/', 1)[0]} | head -3",
            ])))
        elif roll < 0.8:
            actions.append(StrReplaceEditor("view", name))
        else:
            actions.append(StrReplaceEditor(
                "str_replace", name, old_str=f"value = {number % 97}", new_str=f"value = {step}"
            ))
    return [*actions, Submit()]


def new_session(repo: Path, script: Path):
    from agent_core.backends.replay import ReplayBackend
    from agent_core.session import Session, SessionConfig
    from agent_core.trajectory import TrajectoryWriter, default_path, repo_state_dir

    session = Session(
        workspace=Workspace.open(repo), executor=Executor(repo, command_timeout=60),
        backend=ReplayBackend(script), issue="bench: average is off by one",
        config=SessionConfig("toolcall", max_steps=10_000),
    )
    session.subscribe(TrajectoryWriter(default_path(repo_state_dir(repo), session.id)))
    return session


def run_headless(repo: Path, script: Path) -> tuple[float, int]:
    from rich.console import Console

    from agent_core.policy import AutoPolicy
    from app.headless import Transcript

    session = new_session(repo, script)
    session.subscribe(Transcript(Console(file=io.StringIO(), width=120)))
    started = time.perf_counter()
    session.run(AutoPolicy())
    elapsed = time.perf_counter() - started
    session.close()
    return elapsed, len(session.records)


async def run_tui(repo: Path, script: Path) -> tuple[float, int, float]:
    """Wall seconds, steps, and the UI thread's CPU seconds while the session ran."""
    from app.tui import NavApp

    session = new_session(repo, script)
    app = NavApp(session, repo=repo, auto=True)
    async with app.run_test(size=(120, 40)):
        started, ui_started = time.perf_counter(), time.thread_time()
        while session.finished is None:
            await asyncio.sleep(0.02)
        elapsed, ui = time.perf_counter() - started, time.thread_time() - ui_started
        app.exit()
    return elapsed, len(session.records), ui


def write_script(path: Path, actions: list[Action]) -> Path:
    from agent_core.formats import render, translate

    lines = [json.dumps({"output": render(translate(a, "toolcall"), "toolcall", f"Step {n}.")})
             for n, a in enumerate(actions)]
    path.write_text("\n".join(lines) + "\n")
    return path


def outside_run(kind: str, repo: Path, script: Path, steps: int, work: Path) -> float:
    """Seconds from spawning the CLI to the end of its session, seen in its terminal."""
    navtui = str(Path(sys.executable).with_name("navtui"))
    flags = ["--script", str(script), "--sandbox", "off", "--max-steps", str(steps + 5),
             "--issue", "bench: average is off by one"]
    command = [navtui, "--auto", *flags, str(repo)] if kind == "headless" else [navtui, *flags, str(repo)]
    started = time.monotonic()
    terminal = Terminal(command, env=child_env(work), cwd=work)
    try:
        if kind == "headless":
            return terminal.wait_exit(600) - started
        terminal.wait_for("Step 1", 120)
        terminal.press(b"t", "Auto mode on", 60)
        return terminal.wait_for("The model submitted", 600) - started
    finally:
        terminal.close()


def session_table(template: Path, names: list[str], steps: int, runs: int, in_process_runs: int,
                  seed: int, work: Path) -> None:
    long_script = write_script(work / "session.jsonl", session_actions(names, steps, seed))
    short_script = write_script(work / "submit.jsonl", [Submit()])
    times: dict[tuple[str, str], list[float]] = {}
    loads = [os.getloadavg()[0]]
    for run in range(runs):
        for kind in ("headless", "tui") if run % 2 == 0 else ("tui", "headless"):
            for length, script in (("long", long_script), ("short", short_script)):
                repo = work / f"{kind}-{run}-{length}"
                copy_repo(template, repo)
                times.setdefault((kind, length), []).append(outside_run(kind, repo, script, steps, work))
                shutil.rmtree(repo)
        loads.append(os.getloadavg()[0])
    per_step = {kind: (statistics.median(times[(kind, "long")]) - statistics.median(times[(kind, "short")]))
                / steps for kind in ("headless", "tui")}
    inproc = in_process_table(template, long_script, in_process_runs, work) if in_process_runs else {}
    print(f"whole sessions from outside (the CLI in a 120x40 pty): {steps + 1} steps and a submit-only "
          f"session, {runs} runs each (alternating), medians; load average {min(loads):.1f}-{max(loads):.1f}")
    print(f"  {'':<30} {'ms per step':>12} {'start-up s':>11} {'in-process ms/step':>19}")
    for kind, label in (("headless", "headless `navtui --auto`"), ("tui", "TUI `navtui` (t: auto)")):
        extra = f"{inproc[kind] * 1e3:>19.1f}" if kind in inproc else f"{'-':>19}"
        start_up = statistics.median(times[(kind, "short")])
        print(f"  {label:<30} {per_step[kind] * 1e3:>12.1f} {start_up:>11.2f}{extra}")
    ratio = f"{inproc['tui'] / inproc['headless']:>18.2f}x" if inproc else f"{'-':>19}"
    tui_ratio = per_step["tui"] / per_step["headless"]
    print(f"  {'TUI / headless (target <= 1.3)':<30} {tui_ratio:>11.2f}x {'':>11}{ratio}")
    print()


def in_process_table(template: Path, script: Path, runs: int, work: Path) -> dict[str, float]:
    """Median seconds per step in process: Session.run headless, and NavApp under run_test()."""
    per_step: dict[str, list[float]] = {"headless": [], "tui": []}
    for run in range(runs):
        for kind in ("headless", "tui"):
            repo = work / f"inproc-{kind}-{run}"
            copy_repo(template, repo)
            if kind == "headless":
                elapsed, done = run_headless(repo, script)
            else:
                elapsed, done, _ = asyncio.run(run_tui(repo, script))
            per_step[kind].append(elapsed / max(done, 1))
            shutil.rmtree(repo)
    return {kind: statistics.median(values) for kind, values in per_step.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--actions", type=int, default=200, help="part 2's actions (0: skip it)")
    parser.add_argument("--session-steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=2, help="whole-session runs of each kind")
    parser.add_argument("--in-process-runs", type=int, default=1, help="in-process runs (0: skip)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        ours_root, base_root = Path(tmp) / "ours", Path(tmp) / "base"
        names = generate_repo(ours_root, args.files)
        size = sum(p.stat().st_size for p in ours_root.rglob("*") if p.is_file() and ".git" not in p.parts)
        print(f"repository: {args.files} files, {size / 1e6:.0f} MB of source\n")
        if args.session_steps:
            session_table(ours_root, names, args.session_steps, args.runs, args.in_process_runs,
                          args.seed, Path(tmp))
        if not args.actions:
            return
        shutil.copytree(ours_root, base_root, symlinks=True)
        for root in (ours_root, base_root):
            subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=True)
        actions = make_actions(names, args.actions, args.seed)

        ours_exec, ours_ckpt, ours_total, stash = [], [], [], []
        bash_ours: dict[bool, list[float]] = {True: [], False: []}
        bash_base: dict[bool, list[float]] = {True: [], False: []}
        workspace = Workspace.open(ours_root)
        with Executor(ours_root, command_timeout=60) as ours, Executor(base_root) as base:
            ours.execute(Bash("true"))
            workspace.begin("bench")
            for index, action in enumerate(actions, start=1):
                t_exec = timed(lambda: ours.execute(action))
                t_ckpt = timed(lambda: (workspace.checkpoint(index), workspace.step_diff(index)))
                ours_exec.append(t_exec)
                ours_ckpt.append(t_ckpt)
                ours_total.append(t_exec + t_ckpt)
                if isinstance(action, Bash):
                    forks = starts_programs(action.command)
                    bash_ours[forks].append(t_exec)
                    bash_base[forks].append(timed(lambda: subprocess.run(
                        action.command, shell=True, cwd=base_root, capture_output=True
                    )))
                else:
                    base.execute(action)
                stash.append(timed(lambda: subprocess.run(
                    ["git", "stash", "create"], cwd=base_root, capture_output=True, check=True
                )))
        changed = len(workspace.changed_files(0))

    all_ours, all_base = bash_ours[True] + bash_ours[False], bash_base[True] + bash_base[False]
    print(f"step overhead: {args.files} files, {len(actions)} actions ({len(all_ours)} bash, "
          f"{len(bash_ours[False])} of them builtins only), {changed} paths changed by the session")
    print(f"  {'per step (ms)':<44} {'median':>9} {'p95':>9}")
    print(row("navtui execute (all actions)", ours_exec))
    print(row("navtui checkpoint + step diff", ours_ckpt))
    print(row("navtui execute + checkpoint + step diff", ours_total))
    print(row("navtui bash round trip (persistent shell)", all_ours))
    print(row("baseline subprocess.run(cmd, shell=True)", all_base))
    print(row("baseline git stash create", stash))
    print(f"  {'ratios':<44} {'median':>9} {'p95':>9}")
    print(ratio_row("bash round trip / subprocess (target <= 0.5)", all_ours, all_base))
    print(ratio_row("  commands that start programs", bash_ours[True], bash_base[True]))
    print(ratio_row("  builtins only (echo/printf > file)", bash_ours[False], bash_base[False]))
    print(ratio_row("checkpoint+diff / stash create (target <= 1.0)", ours_ckpt, stash))


if __name__ == "__main__":
    main()
