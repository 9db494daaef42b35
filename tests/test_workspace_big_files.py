"""Issue 34, reproduction 5: a tracked file made a sparse terabyte (`truncate -s 1T`) is never
read or hashed by a checkpoint (real git, real bash, the tree watch on and off)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_core.workspace import Workspace
from tests.fixtures.repos import git
from tests.test_workspace_support import bash


@pytest.mark.parametrize("watch", [True, False])
def test_a_tracked_file_made_a_terabyte_is_never_hashed(git_repo: Path, watch: bool):
    """Reproduction 5: `truncate -s 1T` of a tracked file; the checkpoint records it as over
    the cap (a placeholder naming its size) without reading it, says so, and undo to step 0
    puts the user's file back."""
    before = (git_repo / "calc" / "ops.py").read_bytes()
    ws = Workspace.open(git_repo)
    ws.watch_tree = watch
    ws.begin("s")
    bash(git_repo, "truncate -s 1T calc/ops.py")
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(ws.checkpoint(1)), daemon=True)
    thread.start()
    thread.join(60)
    assert done, "the checkpoint hashed the terabyte file"
    told = ws.outside_checkpoints()
    assert any(line.startswith("calc/ops.py: 1.0 TB, over the checkpoint cap") for line in told), told
    assert b"over the checkpoint cap" in git(git_repo, "show", f"{done[0].commit}:calc/ops.py").encode()
    ws.restore(0)
    assert (git_repo / "calc" / "ops.py").read_bytes() == before
    ws.close()
