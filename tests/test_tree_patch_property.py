"""Differential: random steps run on two copies of one repository, one session making in-place
edits' trees in Python (`TreePatcher`), the other sent through git for every step; each
checkpoint's tree is the same in both, whatever the steps did (symlinks swapped in, a file made
a directory, modes, CRLF and filtered files, a `sed -i`-style rename over a file, new and
ignored files, `.gitignore` itself edited), and after an undo."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core.git.checkpoints.snapshot import SnapshotEngine
from agent_core.git.checkpoints.tree_watch import local_file_system
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo

pytestmark = pytest.mark.skipif(not local_file_system(Path.cwd()),
                                reason="the tree watch is off on this file system")

START = {
    "a.txt": "a\n", "crlf.txt": "one\r\ntwo\r\n", "d/b.py": "b\n", "d/e/c.sh": "echo c\n",
    "filtered.dat": "raw\n", "keep.log": "ignored\n", ".gitignore": "*.log\n",
    ".gitattributes": "*.txt text eol=crlf\n*.dat filter=upper\n",
}
PATHS = ["a.txt", "crlf.txt", "d/b.py", "d/e/c.sh", "filtered.dat", "keep.log", ".gitignore",
         "d/new.py"]

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS), st.binary(max_size=24)),
    st.tuples(st.just("append"), st.sampled_from(PATHS), st.sampled_from([b"x\n", b"\r\n", b"\xff"])),
    st.tuples(st.just("rename-over"), st.sampled_from(PATHS), st.binary(max_size=8)),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("chmod"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("symlink"), st.sampled_from(PATHS), st.sampled_from(["a.txt", "../out"])),
    st.tuples(st.just("directory"), st.sampled_from(PATHS), st.none()),
)


def remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def apply(root: Path, op: tuple) -> None:
    kind, rel, arg = op
    path = root / rel
    if path.parent.is_symlink() or (path.parent.exists() and not path.parent.is_dir()):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "write":
        if path.is_dir() and not path.is_symlink():
            return
        if path.is_symlink():
            path.unlink()
        path.write_bytes(arg)
    elif kind == "append":
        if path.is_file() and not path.is_symlink():
            with path.open("ab") as handle:
                handle.write(arg)
    elif kind == "rename-over":  # as `sed -i` does: a temporary file renamed over the file
        if path.is_file() and not path.is_symlink():
            temporary = path.parent / f".sed{len(arg)}tmp"
            temporary.write_bytes(path.read_bytes() + arg)
            os.replace(temporary, path)
    elif kind == "delete":
        remove(path)
    elif kind == "chmod":
        if path.is_file() and not path.is_symlink():
            path.chmod(path.stat().st_mode ^ 0o111)
    elif kind == "symlink":
        remove(path)
        os.symlink(arg, path)
    else:
        remove(path)
        path.mkdir()
        (path / "inside.txt").write_text("inside\n")


def copies(tmp: Path) -> tuple[Path, Path]:
    root = make_repo(tmp / "patched", START)
    git(root, "config", "filter.upper.clean", "tr a-z A-Z")
    git(root, "config", "filter.upper.smudge", "cat")
    other = tmp / "through-git"
    shutil.copytree(root, other, symlinks=True)
    return root, other


def tree(ws: Workspace) -> str:
    return ws._snapshots[ws.checkpoints[-1].commit].tree


@settings(max_examples=25, deadline=None, derandomize=True,  # (the same steps on every CI run)
          suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.lists(operation, min_size=1, max_size=3), min_size=1, max_size=6))
def test_trees_made_in_python_equal_gits(steps):
    tmp = Path(tempfile.mkdtemp(prefix="navtui-patch-"))
    try:
        patched_root, git_root = copies(tmp)
        patched, through_git = Workspace.open(patched_root), Workspace.open(git_root)
        patched.begin("p")
        through_git.begin("p")
        through_git._engine._patcher = lambda: None  # type: ignore[method-assign]
        for step, ops in enumerate(steps, start=1):
            for root in (patched_root, git_root):
                for op in ops:
                    apply(root, op)
            patched.checkpoint(step)
            through_git.checkpoint(step)
            assert tree(patched) == tree(through_git), (step, ops)
            assert patched.step_diff(step) == through_git.step_diff(step), (step, ops)
        target = len(steps) // 2
        patched.restore(target)
        through_git.restore(target)
        for root in (patched_root, git_root):  # a step after the undo starts from its tree
            for op in steps[0]:
                apply(root, op)
        patched.checkpoint(len(steps) + 1)
        through_git.checkpoint(len(steps) + 1)
        assert tree(patched) == tree(through_git), "after the undo"
        for root in (patched_root, git_root):
            git(root, "fsck", "--no-dangling")
        patched.close()
        through_git.close()
    finally:
        shutil.rmtree(tmp)


def test_the_patched_engine_is_the_one_in_use(tmp_path):
    """The differential above compares something: an in-place edit takes the Python path."""
    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    ws = Workspace.open(root)
    ws.begin("s")
    for step in (1, 2):
        ws.checkpoint(step)
    assert ws.watching
    made: list[str] = []
    original = SnapshotEngine._patch

    def spy(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        made.append(result)
        return result

    SnapshotEngine._patch = spy  # type: ignore[method-assign]
    try:
        (root / "a.txt").write_text("b\n")
        ws.checkpoint(3)
    finally:
        SnapshotEngine._patch = original  # type: ignore[method-assign]
    assert made and made[-1] == tree(ws)
    ws.close()
