"""Plan mode in a real terminal (tmux, 80x24): `--mode plan` starts with PLAN in the status bar
and the repository read-only; `p` switches back and the next command writes."""

from __future__ import annotations

import time
from pathlib import Path

from tests.fixtures.tmux import TmuxPane
from tests.test_session import write_script


def test_mode_plan_then_p_in_tmux(git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane):
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: write\nAction: bash echo x > f.txt",
        "Thought: again\nAction: bash echo y > g.txt",
        "Thought: look\nAction: bash ls",
    ])
    tmux_pane.start_navtui("--mode", "plan", "--script", str(script), "--issue", "plan it",
                           str(git_repo), cwd=tmp_path)
    tmux_pane.wait_for("Approve")
    assert "PLAN" in tmux_pane.lines()[0]
    tmux_pane.send("a")
    tmux_pane.wait_for_any("Read-only file system", "plan mode is on")
    tmux_pane.wait_for("echo y > g.txt")
    assert not (git_repo / "f.txt").exists()
    tmux_pane.send("p")
    deadline = time.monotonic() + 30
    while "PLAN" in tmux_pane.lines()[0]:
        assert time.monotonic() < deadline, tmux_pane.screen()
        time.sleep(0.1)
    tmux_pane.send("a")
    tmux_pane.wait_for("Step 2 · bash echo y > g.txt")
    assert (git_repo / "g.txt").read_text() == "y\n"
