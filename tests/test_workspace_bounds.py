"""Huge and binary files are summarised in step diffs and logged patches; refs keep everything."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agent_core.events import Notice
from agent_core.policy import AutoPolicy
from agent_core.workspace import DiffCaps, Workspace
from tests.fixtures.repos import git
from tests.test_session import make_session, write_script
from tests.test_workspace_support import bash


def test_a_huge_file_is_named_with_size_and_hash_not_copied_into_the_diff(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "python3 -c \"print('line of text ' * 8 * 40000)\" > big.txt"
                   " && head -c 300000 /dev/urandom > blob.bin && echo small >> README.md")
    ws.checkpoint(1)
    diff = ws.step_diff(1)
    assert len(diff) < 20_000
    assert "+small" in diff
    blob = git(git_repo, "rev-parse", "refs/navtui/s/1:big.txt").strip()
    size = (git_repo / "big.txt").stat().st_size
    assert f"big.txt: {size} bytes, blob {blob}" in diff
    assert "blob.bin" in diff
    assert "diff --git a/big.txt b/big.txt" in diff  # the diff view still lists the file
    assert hashlib.sha1(b"blob %d\0" % size + (git_repo / "big.txt").read_bytes()).hexdigest() == blob
    ws.restore(0)
    assert not (git_repo / "big.txt").exists()
    ws.restore(0)


def test_a_step_touching_many_files_is_cut_with_a_note(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.diff_caps = DiffCaps(file_bytes=10_000, total_bytes=20_000)
    ws.begin("s")
    bash(git_repo, "mkdir many && for i in $(seq 1 400); do echo \"file $i content\" > many/f$i.txt; done")
    ws.checkpoint(1)
    diff = ws.step_diff(1)
    assert len(diff) < 25_000
    assert "more file(s) not shown" in diff and "git diff-tree -p" in diff
    assert len(ws.changed_files(0, 1)) == 400


def test_the_logged_patch_of_a_huge_session_is_bounded_and_patch_out_is_full(git_repo: Path,
                                                                             tmp_path: Path):
    (git_repo / "data.bin").write_bytes(os.urandom(3_000_000))
    git(git_repo, "add", "data.bin")
    git(git_repo, "commit", "-qm", "data")
    outputs = ["Thought: Remove it.\nAction: bash rm data.bin", "Thought: Done.\nAction: submit"]
    session, _, events = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    try:
        finished = session.run(AutoPolicy())
        assert len(finished.patch) < 20_000 and "data.bin" in finished.patch
        assert not finished.patch_complete
        full = session.workspace.patch()
        assert len(full) > 20_000 and "GIT binary patch" in full
    finally:
        session.close()
    assert any("patch" in e.message and "too large" in e.message
               for e in events if isinstance(e, Notice))
