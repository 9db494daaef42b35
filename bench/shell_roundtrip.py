"""What navtui's persistent Shell adds to a command, above the command's own cost.

Four ways to run the same command, interleaved (same command, back to back) so machine load hits
them alike, on a 500-file repository:

* own cost: a persistent bash fed the command on a pipe, followed by an end marker (no pty, no
  output handling): what running the command in an already-running shell costs;
* own cost in a terminal: the same on a pty through plain pexpect (as SWE-agent's shell runs
  the commands the navigator model was trained on). A program whose output is a terminal
  writes it line by line, and each write goes through the kernel's tty layer: that cost is the
  command's, paid by any terminal, and it is what separates the two "own" columns;
* navtui: `Shell.run(command)` (the session's persistent bash in a pty: markers, output capture
  and bounds, exit status);
* `subprocess.run(command, shell=True)`: a fresh shell per command.

Prints per command the medians, navtui's overhead above the command's own cost (target
<= 0.5 ms), on pipes and in a terminal, and the ratio to a fresh subprocess.

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

import pexpect  # noqa: E402

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


class PtyBash:
    """A persistent bash on a pty through plain pexpect: the command and an end marker."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.child = pexpect.spawn("bash", ["--noprofile", "--norc"], cwd=str(cwd), env=env,
                                   echo=False, dimensions=(50, 200))
        self.child.delaybeforesend = None
        self.count = 0
        self.run("true")

    def run(self, command: str) -> bytes:
        self.count += 1
        marker = f"__bench_end_{self.count}__"
        self.child.send(command.encode() + f"\nprintf '\\n%s_%s\\n' __bench_end {self.count}__\n".encode())
        self.child.expect_exact(marker.encode(), timeout=30)
        return self.child.before

    def close(self) -> None:
        self.child.close(force=True)


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

        piped, terminal = PipedBash(repo, env), PtyBash(repo, env)
        ways = (("own", piped.run), ("tty", terminal.run), ("navtui", None), ("fresh", fresh))
        with Shell(repo, timeout=30) as shell:
            for command in COMMANDS:  # warm-up: page cache, git's index
                shell.run(command), piped.run(command), terminal.run(command), fresh(command)
            for _ in range(args.runs):
                for command in COMMANDS:
                    for name, run in ways:
                        samples[(name, command)].append(clock(run or shell.run, command))
        piped.close()
        terminal.close()

    print(f"{'command':<44} {'own ms':>7} {'tty ms':>7} {'navtui ms':>9} {'overhead ms':>11} "
          f"{'over tty':>8} {'subproc ms':>10} {'ratio':>6}")
    overheads, over_tty, ratios = [], [], []
    for command in COMMANDS:
        own, tty, ours, sub = (statistics.median(samples[(n, command)]) * 1e3
                               for n in ("own", "tty", "navtui", "fresh"))
        overheads.append(ours - own)
        over_tty.append(ours - tty)
        ratios.append(ours / sub)
        print(f"{command:<44} {own:>7.2f} {tty:>7.2f} {ours:>9.2f} {ours - own:>11.2f} "
              f"{ours - tty:>8.2f} {sub:>10.2f} {ours / sub:>5.2f}x")
    print(f"{'median over commands':<44} {'':>7} {'':>7} {'':>9} {statistics.median(overheads):>11.2f} "
          f"{statistics.median(over_tty):>8.2f} {'':>10} {statistics.median(ratios):>5.2f}x")
    print("overhead = navtui - own cost on pipes (target <= 0.5 ms); over tty = navtui - own cost "
          "in a terminal; ratio = navtui / subprocess.run(shell=True)")


if __name__ == "__main__":
    main()
