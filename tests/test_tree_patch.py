"""A snapshot tree made in Python (`TreePatcher`) is byte for byte the tree git makes of the
same work tree, and where git's rules decide (a new entry, a symlink, a large file) it says so
by answering None."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_core.git.objects import tree_patch
from agent_core.git.objects.tree_patch import TreePatcher
from tests.fixtures.repos import git

NAMES = {
    "a.b": "dot\n", "a0": "zero\n", "a/x.py": "x = 1\n", "a/deep/y.py": "y = 2\n",
    "we ird/tab\there": "tab\n", "top.txt": "top\n", "lone/only.txt": "alone\n",
}


def repo_with(root: Path, object_format: str = "sha1", packed: bool = False) -> Path:
    git(root.parent, "init", "-q", f"--object-format={object_format}", str(root))
    for name, content in NAMES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    odd = root / os.fsdecode(b"we ird/n\nl\xff")  # a newline and a byte that is not UTF-8
    odd.write_bytes(b"odd\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    if packed:
        git(root, "gc", "-q")
    return root


def git_tree(root: Path) -> str:
    """The work tree's tree as `git add -A` + `write-tree` make it (a scratch index)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "scratch-index")}
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=root, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    os.unlink(env["GIT_INDEX_FILE"])
    return tree


def patcher(root: Path, object_format: str = "sha1") -> TreePatcher:
    def cat_tree(tree: str) -> bytes:
        return subprocess.run(["git", "cat-file", "tree", tree], cwd=root,
                              capture_output=True, check=True).stdout

    return TreePatcher(root, root / ".git" / "objects", object_format, cat_tree)


def never_made(path: str) -> bool:
    return False


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
@pytest.mark.parametrize("packed", [False, True])
def test_edits_deletions_and_modes_give_gits_own_tree(tmp_path, object_format, packed):
    root = repo_with(tmp_path / "repo", object_format, packed)
    patch = patcher(root, object_format)
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    steps = [
        {"a/x.py": b"x = 11\n"},  # under `a`, which sorts after `a.b` as `a/`
        {"a/deep/y.py": None, "top.txt": b""},  # a directory's last file: the tree goes
        {os.fsdecode(b"we ird/n\nl\xff"): b"still odd\n", "we ird/tab\there": b"\0binary\xfe"},
        {"lone/only.txt": None, "a0": b"zero\n"},  # written as it was: no change there
    ]
    for changes in steps:
        for name, content in changes.items():
            if content is None:
                (root / name).unlink()
            else:
                (root / name).write_bytes(content)
        if "top.txt" in changes:
            (root / "a.b").chmod(0o755)
            changes = {**changes, "a.b": b""}
        tree = patch.patch(tree, list(changes), never_made)
        assert tree == git_tree(root), changes
    git(root, "fsck", "--strict", "--no-dangling", tree)


def test_with_filemode_off_a_file_keeps_its_mode(tmp_path):
    root = repo_with(tmp_path / "repo")
    git(root, "config", "core.filemode", "false")
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    (root / "top.txt").chmod(0o755)
    (root / "top.txt").write_text("changed\n")
    patched = TreePatcher(root, root / ".git" / "objects", "sha1", lambda t: b"", filemode=False)
    assert patched.patch(tree, ["top.txt"], never_made) == git_tree(root)
    assert "100644 blob" in git(root, "ls-tree", git_tree(root), "top.txt")


@pytest.mark.parametrize("make", [
    lambda root: (root / "new.txt").write_text("new\n"),  # a new entry: its ignore rules
    lambda root: ((root / "top.txt").unlink(), (root / "top.txt").symlink_to("a0")),
    lambda root: ((root / "top.txt").unlink(), (root / "top.txt").mkdir()),
    lambda root: (root / "top.txt").write_bytes(b"x" * (tree_patch.MAX_LOOSE_BYTES + 1)),
])
def test_what_git_decides_is_left_to_git(tmp_path, make):
    root = repo_with(tmp_path / "repo")
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    make(root)
    changed = ["new.txt"] if (root / "new.txt").exists() else ["top.txt"]
    assert patcher(root).patch(tree, changed, never_made) is None


def test_a_temporary_file_made_and_gone_is_skipped_only_when_known_to_be(tmp_path):
    root = repo_with(tmp_path / "repo")
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    (root / "a0").write_text("sed wrote me\n")
    paths = ["a0", "sedX1y2Z3"]
    assert patcher(root).patch(tree, paths, never_made) is None
    assert patcher(root).patch(tree, paths, lambda path: path == "sedX1y2Z3") == git_tree(root)
