"""What navtui's persistent Shell adds to a command, above the command's own cost.

Three ways to run the same command, interleaved (same command, back to back) so machine load hits
them alike, on a 500-file repository:

* own cost: a persistent bash fed the command on a pipe, followed by an end marker (no pty, no
  output handling): what running the command in an already-running shell costs;
* navtui: `Shell.run(command)` (the session's persistent bash in a pty: markers, output capture
  and bounds, exit status);
* `subprocess.run(command, shell=True)`: a fresh shell per command.

Prints per command the medians, navtui's overhead above the command's own cost (target
<= 0.5 ms) and the ratio to a fresh subprocess.

    python bench/shell_roundtrip.py [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_core.executor.shell import Shell, shell_environment  # noqa: E402

COMMANDS = [
    "git status --short",
    "git log --oneline -5",
    "grep -rn 'return' src | head -20",
    "ls -la src | head -20",
    "cat src/mod_7.py",
    "sed -n '1,40p' src/mod_3.py",
    "find src -name '*.py' | wc -l",
    "(cd src && ls | head -3)",
    "python3 -c 'import sys; print(sys.version)'",
    "echo done",
]


def make_repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    for i in range(500):
        body = "".join(f"def f_{i}_{k}(x):\n    return x * {k} + {i}\n\n" for k in range(20))
        (root / "src" / f"mod_{i}.py").write_text(body)
    env = {**shell_environment(), "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=b", "-c", "user.email=b@b.invalid", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return root


class PipedBash:
    """A persistent bash on pipes: writes the command and an end marker, reads up to it."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], cwd=cwd, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        self.count = 0

    def run(self, command: str) -> bytes:
        self.count += 1
        marker = f"__bench_end_{self.count}__".encode()
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command.encode() + b"\nprintf '\\n%s %s\\n' " + marker + b" $?\n")
        self.process.stdin.flush()
        output = []
        for line in iter(self.process.stdout.readline, b""):
            if line.startswith(marker):
                break
            output.append(line)
        return b"".join(output)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def clock(run, command: str) -> float:
    start = time.perf_counter()
    run(command)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="runs of each command")
    args = parser.parse_args()
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="navtui-bench-") as tmp:
        repo = make_repo(Path(tmp) / "repo")
        env = {**shell_environment(), "PYTHONDONTWRITEBYTECODE": "1"}

        def fresh(command: str) -> None:
            subprocess.run(command, shell=True, cwd=repo, env=env, capture_output=True)

        piped = PipedBash(repo, env)
        with Shell(repo, timeout=30) as shell:
            for command in COMMANDS:  # warm-up: page cache, git's index
                shell.run(command), piped.run(command), fresh(command)
            for _ in range(args.runs):
                for command in COMMANDS:
                    for name, run in (("own", piped.run), ("navtui", shell.run), ("fresh", fresh)):
                        samples[(name, command)].append(clock(run, command))
        piped.close()

    print(f"{'command':<44} {'own ms':>8} {'navtui ms':>10} {'overhead ms':>12} {'subproc ms':>11} {'ratio':>7}")
    overheads, ratios = [], []
    for command in COMMANDS:
        own, ours, sub = (statistics.median(samples[(n, command)]) * 1e3 for n in ("own", "navtui", "fresh"))
        overheads.append(ours - own)
        ratios.append(ours / sub)
        print(f"{command:<44} {own:>8.2f} {ours:>10.2f} {ours - own:>12.2f} {sub:>11.2f} {ours / sub:>6.2f}x")
    print(f"{'median over commands':<44} {'':>8} {'':>10} {statistics.median(overheads):>12.2f} "
          f"{'':>11} {statistics.median(ratios):>6.2f}x")
    print("overhead = navtui - own cost (target <= 0.5 ms); ratio = navtui / subprocess.run(shell=True)")


if __name__ == "__main__":
    main()
