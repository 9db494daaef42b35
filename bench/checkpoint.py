"""Cost of one navtui checkpoint against `git stash create`, measured side by side.

Two identical copies of a generated repository; each round makes the same change in both (none,
one file edited, or nothing with a large untracked file present), then times
`Workspace.checkpoint` (+ `step_diff`) on copy A and `git stash create` on copy B, interleaved:
wall time, and CPU time (this process and the git processes it waited for), which machine load
does not inflate; and how many git processes navtui started per step (`git stash create` is
one, and what it runs itself). Targets: a step that changed nothing, and one that edited one
file (at 1,000 files), cost <= 1.0x `git stash create`; the edit runs <= 3 git processes.
"watch off" is the same with the inotify tree watch off, as on file systems where it cannot be
trusted (every checkpoint then runs `git status`).
Also: undo of one step that touched many files. Nothing is written into the checkout.

Run: `python bench/checkpoint.py [--files 1000 10000 50000] [--rounds 15] [--big-mb 100]`
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_core.workspace import Workspace

class GitCount:
    """Counts the git processes this process starts (every `subprocess` call goes through
    `Popen`): wraps it for the bench's lifetime."""

    def __init__(self) -> None:
        self.started = 0
        count = self
        original = subprocess.Popen

        class Counted(original):  # type: ignore[misc, valid-type]
            def __init__(self, args, *rest, **options):  # noqa: ANN001
                if isinstance(args, (list, tuple)) and args and args[0] == "git":
                    count.started += 1
                super().__init__(args, *rest, **options)

        subprocess.Popen = Counted  # type: ignore[misc]


GIT_COUNT = GitCount()
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@navtui.invalid", "-c", "gc.auto=0"]


def generate(root: Path, n_files: int) -> None:
    root.mkdir(parents=True)
    for i in range(n_files):
        path = root / f"pkg{i // 1000:02d}/mod{i // 100 % 10}/file{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}(x):\n    return x + {i}\n")
    (root / ".gitignore").write_text("*.pyc\n__pycache__/\n")
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "generated"], cwd=root, check=True)


def stash_create(root: Path) -> None:
    subprocess.run([*GIT, "stash", "create"], cwd=root, check=False, capture_output=True)


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def cpu_seconds() -> float:
    """CPU time of this process and of the child processes it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measured(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call."""
    cpu = cpu_seconds()
    wall = timed(fn)
    return wall, cpu_seconds() - cpu


def compare(label: str, a: Path, b: Path, rounds: int, change: Callable[[Path, int], None],
            watch: bool = True) -> None:
    ws = Workspace.open(a)
    ws.watch_tree = watch
    ws.begin("bench")
    ours, theirs, processes = [], [], []
    for n in range(1, rounds + 1):
        change(a, n)
        change(b, n)

        def step(n: int = n) -> None:
            ws.checkpoint(n)
            ws.step_diff(n)

        started = GIT_COUNT.started
        ours.append(measured(step))
        processes.append(GIT_COUNT.started - started)
        theirs.append(measured(lambda: stash_create(b)))
    ws.close()
    o, t = (statistics.median(w for w, _ in ours), statistics.median(w for w, _ in theirs))
    oc, tc = (statistics.median(c for _, c in ours), statistics.median(c for _, c in theirs))
    # (the first steps lay the tree watch and start the session's cat-file: the median is a
    # steady step's count)
    print(f"{label:<44} {o * 1000:9.1f} ms {t * 1000:9.1f} ms {o / t:7.2f}x"
          f" {oc * 1000:9.1f} ms {tc * 1000:9.1f} ms {oc / tc:7.2f}x"
          f" {statistics.median(processes):5.0f} (max {max(processes)})")


def no_change(root: Path, n: int) -> None:
    """A step that changed nothing (a `read`, a `search`, `ls`)."""


def edit_one(root: Path, n: int) -> None:
    with (root / "pkg00/mod0/file00000.py").open("a") as handle:
        handle.write(f"# step {n}\n")


def copies(tmp: Path, n_files: int, name: str) -> tuple[Path, Path]:
    a, b = tmp / f"{name}-a", tmp / f"{name}-b"
    if not (tmp / f"{name}-base").exists():
        generate(tmp / f"{name}-base", n_files)
    for target in (a, b):
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(tmp / f"{name}-base", target, symlinks=True)
        subprocess.run([*GIT, "update-index", "-q", "--refresh"], cwd=target, check=False)
    return a, b


def undo_many(tmp: Path, n_files: int) -> None:
    """Undo of one step that rewrote every file (the issue's 100k-file step, scaled), against
    `git checkout -- .` putting the same files back on the other copy."""
    a, b = copies(tmp, n_files, f"undo{n_files}")
    ws = Workspace.open(a)
    ws.begin("bench")
    for root in (a, b):
        for path in root.glob("pkg*/mod*/*.py"):
            path.write_text(path.read_text() + "# touched\n")
    ws.checkpoint(1)
    ours = timed(lambda: ws.restore(0))
    theirs = timed(lambda: subprocess.run([*GIT, "checkout", "--", "."], cwd=b, check=True))
    ws.close()
    label = f"undo of a step that changed {n_files} files"
    print(f"{label:<44} {ours * 1000:9.1f} ms {theirs * 1000:9.1f} ms {ours / theirs:7.2f}x"
          "  (baseline: git checkout -- .)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--big-mb", type=int, default=100)
    args = parser.parse_args()
    print(f"{'':<44} {'wall time':-^34} {'CPU time':-^34}")
    print(f"{'case (median per step)':<44} {'navtui':>12} {'stash create':>12} {'ratio':>8}"
          f" {'navtui':>12} {'stash create':>12} {'ratio':>8}  git processes")
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as name:
        tmp = Path(name)
        for n_files in args.files:
            a, b = copies(tmp, n_files, f"r{n_files}")
            compare(f"{n_files} files, step changed nothing", a, b, args.rounds, no_change)
            a, b = copies(tmp, n_files, f"r{n_files}")
            compare(f"{n_files} files, changed nothing, watch off", a, b, args.rounds, no_change,
                    watch=False)
            a, b = copies(tmp, n_files, f"r{n_files}")
            compare(f"{n_files} files, step edited one file", a, b, args.rounds, edit_one)
        a, b = copies(tmp, args.files[0], f"r{args.files[0]}")
        for root in (a, b):
            with (root / "big.data").open("wb") as handle:
                handle.truncate(args.big_mb * 1_000_000)
        compare(f"{args.files[0]} files + {args.big_mb} MB untracked, no change",
                a, b, max(3, args.rounds // 3), no_change)
        undo_many(tmp, args.files[-1])
    print("targets: a step that changed nothing, and one that edited one file at 1,000 files,"
          " <= 1.0x `git stash create`; <= 3 git processes for the edit")


if __name__ == "__main__":
    main()
