"""What keeping git's own files (config, hooks, attributes, excludes) in checkpoints costs a step,
and what the check for the user's edits before an approved step costs.

Per step, interleaved on one repository with 3 real hooks and git's 14 samples:

* before: the watch navtui ran after every step until b8aa02a (`ControlWatch.changes()`, which
  read and hashed every file), loaded from that commit's source;
* now, nothing touched: `ControlFiles.current()` (stat only, what `Workspace.checkpoint` adds);
* now, a hook touched: `ControlFiles.current()` after appending to one hook (the files are
  hashed into git objects and a commit is made).

Then, on a repository of `--files` files, a clean tree: `Workspace.foreign_changes()` (the check
before a step a person approved) beside `Workspace.checkpoint()` of an unchanged tree.

Last, the files inside a nested repository of `--nested-files` files: the first snapshot
(`Workspace.begin`) and a checkpoint of an unchanged tree, with the nested work tree snapshotted
(now) and left out (as before: `nested.MAX_TRACKED = 0`), interleaved.

Run: `python bench/control_files.py [--files 10000] [--rounds 200] [--nested-files 2000]`
(under a temporary directory).
CPU figures include the git processes each call starts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_core.git.control_files import nested  # noqa: E402
from agent_core.git import ControlFiles, GitRunner # noqa: E402
from agent_core.workspace import Workspace  # noqa: E402

BASELINE_COMMIT = "b8aa02a"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@navtui.invalid", "-c", "gc.auto=0"]


def baseline_watch() -> type:
    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:agent_core/git/control.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout
    module = types.ModuleType("control_before")
    exec(compile(source, "control_before.py", "exec"), module.__dict__)  # noqa: S102
    return module.ControlWatch


def make_repo(root: Path, n_files: int) -> None:
    root.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    for i in range(n_files):
        path = root / f"d{i // 100:03d}" / f"f{i:05d}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"line {i}\n" * 40)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "files"], cwd=root, check=True)
    hooks = root / ".git" / "hooks"
    for name in ("pre-commit", "commit-msg", "pre-push"):
        (hooks / name).write_text("#!/bin/sh\n" + "# a hook of some length\n" * 50)
        (hooks / name).chmod(0o755)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms including child processes) of one call."""
    before, start = os.times(), time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])
    return wall * 1000, cpu * 1000


def row(name: str, samples: list[tuple[float, float]], base: float | None) -> str:
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.mean(s[1] for s in samples)
    ratio = f"{wall / base:6.2f}x" if base else "   1.00x"
    return f"  {name:<44} {wall:9.3f} ms {cpu:9.3f} ms  {ratio}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--nested-files", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        make_repo(repo, args.files)
        git_dir = repo / ".git"
        before = baseline_watch()(repo, git_dir, git_dir)
        now = ControlFiles(GitRunner(repo), repo, git_dir, git_dir)
        index = Path(tmp) / "control.index"
        now.current(index)
        hook = git_dir / "hooks" / "pre-commit"
        samples: dict[str, list[tuple[float, float]]] = {"before": [], "same": [], "touched": []}
        for _ in range(args.rounds):
            samples["before"].append(timed(before.changes))
            samples["same"].append(timed(lambda: now.current(index)))
            with hook.open("a") as f:
                f.write("# one more line\n")
            before.changes()  # the baseline sees the touch outside its timing, like `now` below
            samples["touched"].append(timed(lambda: now.current(index)))
        print(f"git's own files, per step ({args.rounds} rounds; load {os.getloadavg()[0]:.2f})")
        print(f"  {'':<44} {'wall med':>12} {'CPU mean':>12}  vs before")
        base = statistics.median(s[0] for s in samples["before"])
        print(row(f"before ({BASELINE_COMMIT}: read + hash all, every step)", samples["before"], None))
        print(row("now, nothing touched (stat only)", samples["same"], base))
        print(row("now, a hook touched (hash + commit)", samples["touched"], base))

        ws = Workspace.open(repo)
        ws.begin("bench")
        steps = max(10, args.rounds // 10)
        check, point = [], []
        for n in range(1, steps + 1):
            check.append(timed(ws.foreign_changes))
            point.append(timed(lambda n=n: ws.checkpoint(n)))
        ws.close()
        print(f"\nbefore an approved step, {args.files} files, clean tree ({steps} steps; "
              f"load {os.getloadavg()[0]:.2f})")
        base = statistics.median(s[0] for s in point)
        print(row("Workspace.checkpoint (unchanged tree)", point, None))
        print(row("Workspace.foreign_changes (the added check)", check, base))
        nested_part(Path(tmp), args.files, args.nested_files, steps)


def nested_part(tmp: Path, n_files: int, nested_files: int, steps: int) -> None:
    repo = tmp / "outer"
    make_repo(repo, n_files)
    make_repo(repo / "vendor" / "lib", nested_files)
    keep = nested.MAX_TRACKED
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in ("b0", "b1", "c0", "c1")}
    for round_ in range(3):
        for on in (False, True):
            nested.MAX_TRACKED = keep if on else 0
            ws = Workspace.open(repo)
            session = f"n{round_}{int(on)}"
            samples[f"b{int(on)}"].append(timed(lambda: ws.begin(session)))
            for n in range(1, steps + 1):
                samples[f"c{int(on)}"].append(timed(lambda n=n: ws.checkpoint(n)))
            ws.delete_session(session)
            ws.close()
    nested.MAX_TRACKED = keep
    print(f"\na {nested_files}-file nested repository in a {n_files}-file one (3 sessions of "
          f"{steps} steps each way; load {os.getloadavg()[0]:.2f})")
    base = statistics.median(s[0] for s in samples["b0"])
    print(row("begin, nested files left out (before)", samples["b0"], None))
    print(row("begin, nested files snapshotted (now)", samples["b1"], base))
    base = statistics.median(s[0] for s in samples["c0"])
    print(row("checkpoint unchanged, nested left out (before)", samples["c0"], None))
    print(row("checkpoint unchanged, nested snapshotted (now)", samples["c1"], base))


if __name__ == "__main__":
    main()
