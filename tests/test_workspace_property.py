"""Random edit sequences: restoring any checkpoint gives back exactly the files it saw."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core.workspace import Workspace
from tests.fixtures.repos import make_repo
from tests.test_workspace_support import files

PATHS = ["a.txt", "sp ace.txt", "ü.md", "d/b.py", "d/e/c.sh", "keep.log"]

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS), st.binary(max_size=40)),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("chmod"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("link"), st.sampled_from(PATHS), st.sampled_from(["a.txt", "../outside"])),
)


def apply(root: Path, op: tuple) -> None:
    kind, rel, arg = op
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "write":
        if path.is_symlink():
            path.unlink()
        path.write_bytes(arg)
    elif kind == "delete":
        if path.is_symlink() or path.exists():
            path.unlink()
    elif kind == "chmod":
        if path.exists() and not path.is_symlink():
            path.chmod(path.stat().st_mode ^ 0o100)
    else:
        if path.is_symlink() or path.exists():
            path.unlink()
        os.symlink(arg, path)


def tracked(snapshot: dict) -> dict:
    return {k: v for k, v in snapshot.items() if not k.endswith(".log")}


def ignored(snapshot: dict) -> dict:
    return {k: v for k, v in snapshot.items() if k.endswith(".log")}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.lists(operation, min_size=1, max_size=4), min_size=1, max_size=4),
    data=st.data(),
)
def test_restore_any_checkpoint_is_exact(steps, data):
    tmp = Path(tempfile.mkdtemp(prefix="navtui-prop-"))
    try:
        root = make_repo(tmp / "repo", {"a.txt": "base\n", "d/b.py": "b\n", ".gitignore": "*.log\n"})
        ws = Workspace.open(root)
        ws.begin("p")
        seen = [files(root)]
        for index, ops in enumerate(steps, start=1):
            for op in ops:
                apply(root, op)
            ws.checkpoint(index)
            seen.append(files(root))
        target = data.draw(st.integers(0, len(steps)), label="restore to")
        before = files(root)
        ws.restore(target)
        after = files(root)
        assert tracked(after) == tracked(seen[target])
        assert ignored(after) == ignored(seen[target])
        assert not ws.dirty_since(target)
    finally:
        shutil.rmtree(tmp)
