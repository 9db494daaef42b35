"""A step diff read from one `diff-tree --raw -p` (`TreeDiffs.step`) says exactly what the raw
listing and the pathspec-limited patch said as two processes: renames, huge files (one side,
both sides, renamed), modes, symlinks, binary files, deletions, cuts at the size cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core.git.objects.diffs import DiffCaps, TreeDiffs, bounded_diff
from agent_core.git.process.runner import GitRunner
from agent_core.git.restore.treeops import raw_changes
from tests.fixtures.repos import git, make_repo

LINES = "".join(f"line {i}\n" for i in range(200))


def tree_of(root: Path) -> str:
    git(root, "add", "-A")
    return git(root, "write-tree").strip()


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, list[str]]:
    root = make_repo(tmp_path / "repo", {
        "a/small.py": "x = 1\n", "a/keep.txt": LINES, "b/big.txt": "B" * 5000,
        "b/big2.txt": "C" * 5000, "run.sh": "echo\n", "gone.txt": "bye\n", "bin.dat": "\0\1\2",
        "moved.txt": LINES + "tail\n", "big3.txt": "D" * 5000,
    })
    first = tree_of(root)
    (root / "a/small.py").write_text("x = 2\n")
    (root / "b/big.txt").write_text("B" * 6000)  # huge both sides
    (root / "b/new_big.txt").write_text("N" * 7000)  # huge, new
    (root / "b/big2.txt").write_text("tiny\n")  # huge before, small now
    os.chmod(root / "run.sh", 0o755)
    (root / "gone.txt").unlink()
    (root / "bin.dat").write_bytes(b"\0\3\4\5")
    (root / "c").mkdir()
    os.rename(root / "moved.txt", root / "c/moved.txt")
    os.rename(root / "big3.txt", root / "c/big3.txt")  # a huge file renamed
    os.symlink("a/small.py", root / "link")
    (root / "a/keep.txt").write_text(LINES.replace("line 100", "line one hundred"))
    second = tree_of(root)
    (root / "c/moved.txt").write_text(LINES + "tail\nmore\n")
    (root / "a/other.txt").write_text("é non-ascii ü\n")
    third = tree_of(root)
    return root, [first, second, third]


@pytest.mark.parametrize("caps", [DiffCaps(), DiffCaps(file_bytes=4000), DiffCaps(4000, 300),
                                  DiffCaps(file_bytes=0)])
def test_one_process_says_what_two_did(trees, caps):
    root, ids = trees
    runner = GitRunner(root)
    for old, new in [(ids[0], ids[1]), (ids[1], ids[2]), (ids[0], ids[2]), (ids[2], ids[0])]:
        diffs = TreeDiffs(runner)
        raw = diffs.step(old, new, caps)
        assert diffs.last_step(old, new) is not None  # its output lined up
        assert raw == raw_changes(runner, old, new) == diffs.raw(old, new)
        assert diffs.bounded(old, new, caps) == bounded_diff(runner, raw, old, new, caps)
    runner.close()


def test_the_step_patch_is_used_where_no_huge_file_was_renamed(trees, monkeypatch):
    root, ids = trees
    runner = GitRunner(root)
    diffs = TreeDiffs(runner)
    caps = DiffCaps(file_bytes=4000)
    diffs.step(ids[1], ids[2], caps)
    monkeypatch.setattr("agent_core.git.objects.diffs.bounded_diff", None)  # no second diff-tree
    text, complete = diffs.bounded(ids[1], ids[2], caps)
    assert "+more" in text and "non-ascii" in text and complete


def test_the_new_trees_are_those_that_changed(trees):
    root, ids = trees
    runner = GitRunner(root)
    diffs = TreeDiffs(runner)
    diffs.step(ids[0], ids[1], DiffCaps())
    step = diffs.last_step(ids[0], ids[1])
    assert step is not None
    wanted = {git(root, "rev-parse", f"{ids[1]}:{d}").strip() for d in ("a", "b", "c")}
    assert set(step.new_trees) == wanted
