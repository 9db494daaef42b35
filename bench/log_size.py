"""Session log size, time and peak memory for huge files, with and without the log's bounds.

Two scenarios from issue 11, each run as a real session (replay backend, real bash, real git
workspace, the real `TrajectoryWriter`) in a fresh process, once with the log unbounded
(`field_limit=None`, what navtui did before) and once with the default bounds:

* create: the model creates a file of `--create-mb` MB with `str_replace_editor create`;
* rm: the model deletes an untracked file of `--rm-mb` MB, then submits.

Run: `python bench/log_size.py [--create-mb 50] [--rm-mb 20]`
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_core.backends.replay import ReplayBackend
from agent_core.executor import Executor
from agent_core.policy import AutoPolicy
from agent_core.session import Session, SessionConfig
from agent_core.trajectory import FIELD_LIMIT, TrajectoryWriter
from agent_core.workspace import Workspace

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@navtui.invalid"]
SUBMIT = '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>'


def tool_call(name: str, arguments: dict) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def text_of(mb: int) -> str:
    """`mb` MB of lines that never repeat (a repeating model reply is stopped early)."""
    lines = mb * 1024 * 1024 // 73
    return "".join(f"{n:07d} {hashlib.sha256(str(n).encode()).hexdigest()}\n" for n in range(lines))


def run_one(scenario: str, mb: int, bounded: bool) -> dict:
    """One session in this process; returns its log size, wall time and peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True)
        (repo / "README").write_text("bench\n")
        subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", "init"], cwd=repo, check=True)
        if scenario == "create":
            turns = [tool_call("str_replace_editor", {
                "command": "create", "path": "/testbed/big.txt", "file_text": text_of(mb)})]
        else:
            (repo / "big.txt").write_text(text_of(mb))
            turns = [tool_call("bash", {"command": "rm big.txt"}), SUBMIT]
        script = Path(tmp) / "script.jsonl"
        script.write_text("".join(json.dumps({"output": t}) + "\n" for t in turns))
        log = Path(tmp) / "log.jsonl"
        writer = TrajectoryWriter(log, field_limit=FIELD_LIMIT if bounded else None)
        session = Session(
            workspace=Workspace.open(repo),
            executor=Executor(repo, command_timeout=600),
            backend=ReplayBackend(script, chunk_size=1 << 20),
            issue="bench",
            config=SessionConfig(dialect="toolcall", max_steps=len(turns),
                                 context_window=1 << 30),
        )
        session.subscribe(writer)
        started = time.perf_counter()
        try:
            finished = session.run(AutoPolicy())
        finally:
            session.close()
            writer.close()
        return {
            "reason": finished.reason,
            "seconds": time.perf_counter() - started,
            "log_mb": log.stat().st_size / 2**20,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }


def measure(scenario: str, mb: int, bounded: bool) -> dict:
    """`run_one` in a fresh process, so each peak RSS is its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", scenario, str(mb), "1" if bounded else "0"],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--create-mb", type=int, default=50)
    parser.add_argument("--rm-mb", type=int, default=20)
    parser.add_argument("--one", nargs=3, metavar=("SCENARIO", "MB", "BOUNDED"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        scenario, mb, bounded = args.one
        print(json.dumps(run_one(scenario, int(mb), bounded == "1")))
        return
    print(f"{'scenario':<16} {'':>10} {'unbounded':>12} {'bounded':>12} {'ratio':>8}")
    for scenario, mb in (("create", args.create_mb), ("rm", args.rm_mb)):
        before = measure(scenario, mb, bounded=False)
        after = measure(scenario, mb, bounded=True)
        name = f"{scenario} {mb} MB"
        for key, unit in (("log_mb", "log MB"), ("seconds", "seconds"), ("peak_rss_mb", "RSS MB")):
            ratio = after[key] / before[key] if before[key] else float("nan")
            print(f"{name:<16} {unit:>10} {before[key]:>12.1f} {after[key]:>12.1f} {ratio:>7.3f}x")
            name = ""
        print(f"{'':<16} {'finished':>10} {before['reason']:>12} {after['reason']:>12}")


if __name__ == "__main__":
    main()
