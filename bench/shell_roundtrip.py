"""Round trip of one command: the session's persistent Shell vs a fresh subprocess per command.

Also measures pexpect's default `delaybeforesend` (0.05 s slept before every send), which the
Shell turns off. The variants run interleaved (same command, back to back) so machine load hits
them alike. Prints median and p95 per command and the ratio to `subprocess.run(shell=True)`.

    python bench/shell_roundtrip.py [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pexpect

from agent_core.executor.shell import Shell, shell_environment

COMMANDS = ["true", "cd src && cd ..", "echo hello", "ls -la", "git status --short", "grep -rn def ."]
BASELINE = "subprocess.run(shell=True)"


def make_repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    for i in range(50):
        (root / "src" / f"mod_{i}.py").write_text(f"def f_{i}():\n    return {i}\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=b", "-c", "user.email=b@b.invalid", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=shell_environment())
    return root


def pexpect_default_delay() -> float:
    """pexpect's own default, read from a spawned instance rather than assumed."""
    probe = pexpect.spawn("true")
    delay = probe.delaybeforesend
    probe.close()
    return delay


def clock(run, command: str) -> float:
    start = time.perf_counter()
    run(command)
    return time.perf_counter() - start


def p95(samples: list[float]) -> float:
    return sorted(samples)[int(0.95 * (len(samples) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    delay = pexpect_default_delay()
    slow_name = f"Shell, delaybeforesend={delay} (pexpect default)"
    samples: dict[str, list[float]] = defaultdict(list)
    per_command: dict[tuple[str, str], list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo")
        env = shell_environment()

        def fresh(command: str) -> None:
            subprocess.run(command, shell=True, cwd=repo, env=env, capture_output=True)

        with Shell(repo, timeout=30) as fast, Shell(repo, timeout=30, send_delay=delay) as slow:
            for i in range(args.runs):
                command = COMMANDS[i % len(COMMANDS)]
                variants = [(BASELINE, fresh), ("Shell, delaybeforesend=None", fast.run)]
                if i < max(args.runs // 4, len(COMMANDS)):
                    variants.append((slow_name, slow.run))
                for name, run in variants:
                    elapsed = clock(run, command)
                    samples[name].append(elapsed)
                    per_command[(name, command)].append(elapsed)
    base = statistics.median(samples[BASELINE])
    print(f"{'variant':<50} {'runs':>5} {'median ms':>10} {'p95 ms':>8} {'ratio':>7}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<50} {len(values):>5} {median * 1e3:>10.2f} {p95(values) * 1e3:>8.2f}"
              f" {median / base:>6.2f}x")
    print(f"\n{'command':<22} {'subprocess ms':>14} {'Shell ms':>9} {'ratio':>7}")
    for command in COMMANDS:
        sub = statistics.median(per_command[(BASELINE, command)])
        ours = statistics.median(per_command[("Shell, delaybeforesend=None", command)])
        print(f"{command:<22} {sub * 1e3:>14.2f} {ours * 1e3:>9.2f} {ours / sub:>6.2f}x")
    print("ratio = median / subprocess median (lower is better)")


if __name__ == "__main__":
    main()
