"""A file watcher creating and deleting files while navtui checkpoints must not end the session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agent_core.workspace import Workspace

CHURN = """
import os, sys
root, name = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(root, "src"), exist_ok=True)
n = 0
while True:
    path = os.path.join(root, "src", f".{name}{n % 7}")
    with open(path, "w") as handle:
        handle.write("x" * (n % 50))
    if n % 2:
        os.unlink(path)
    n += 1
"""


def test_checkpoints_survive_files_vanishing_under_them(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    # Three watchers at once outrun git's listing more often than a fixed count of retries allows.
    churners = [
        subprocess.Popen([sys.executable, "-c", CHURN, str(git_repo), name])
        for name in ("tmp", "swp", "pyc")
    ]
    try:
        for index in range(1, 81):
            (git_repo / "progress.txt").write_text(f"{index}\n")
            ws.checkpoint(index)
    finally:
        for churner in churners:
            churner.kill()
            churner.wait()
    assert ws.checkpoints[-1].index == 80
    assert "progress.txt" in ws.changed_files(0)
