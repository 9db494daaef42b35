"""agent_core/git/records.py reads git's -z listings as git itself reports them: checked against
git's other views of the same trees (`--name-status`, `ls-tree`, `cat-file`) on a repository
whose paths hold tabs, newlines and bytes that are not UTF-8, with a gitlink, a symlink, an
executable, a type change and a rename."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_core.git import WorkspaceError
from agent_core.git.objects.records import index_records, raw_records, tree_records

ODD = [b"plain.txt", b"tab\there.txt", b"new\nline.txt", b"caf\xe9.txt", b"dir/sub/deep.txt"]


def git(repo: Path, *args: str | bytes, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, input=stdin, check=True,
                          capture_output=True).stdout


def _write(repo: Path, name: bytes, data: bytes) -> None:
    path = os.path.join(os.fsencode(repo), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data)


@pytest.fixture
def two_trees(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for name in ODD:
        _write(repo, name, b"one " + name + b"\n")
    _write(repo, b"run.sh", b"#!/bin/sh\n")
    _write(repo, b"moved.txt", b"a file long enough to be found again after its move\n" * 4)
    os.symlink("plain.txt", repo / "link")
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub")
    old = git(repo, "write-tree").decode().strip()
    _write(repo, b"tab\there.txt", b"changed\n")
    os.remove(os.path.join(os.fsencode(repo), b"new\nline.txt"))
    os.chmod(repo / "run.sh", 0o755)
    os.remove(repo / "link")
    _write(repo, b"link", b"now a file\n")
    os.rename(repo / "moved.txt", repo / "renamed.txt")
    _write(repo, b"added \xff.bin", b"\x00\x01")
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'2' * 40},sub")
    new = git(repo, "write-tree").decode().strip()
    return repo, old, new


def test_diff_tree_records_match_gits_name_status(two_trees):
    repo, old, new = two_trees
    for args in (["-r", "--no-renames"], ["-r", "-M"], ["-r", "-t", "--no-renames"]):
        parsed = raw_records(git(repo, "diff-tree", "-z", *args, old, new))
        listed = git(repo, "diff-tree", "-z", "--name-status", *args, old, new).split(b"\0")
        expected, at = [], 0
        while at < len(listed) - 1:
            status = listed[at].decode()
            count = 2 if status[0] in "RC" else 1
            expected.append((status[0], listed[at + count]))
            at += 1 + count
        assert [(c.status, c.path) for c in parsed] == expected, args
    plain = {c.path: c for c in raw_records(git(repo, "diff-tree", "-r", "-z", "--no-renames",
                                                 old, new))}
    assert plain[b"sub"].old_mode == plain[b"sub"].new_mode == "160000"
    assert plain[b"sub"].new_id == "2" * 40 and plain[b"run.sh"].new_mode == "100755"
    assert plain[b"new\nline.txt"].removed and plain[b"added \xff.bin"].added
    assert plain[b"link"].status == "T" and plain[b"link"].old_mode == "120000"
    renamed = [c for c in raw_records(git(repo, "diff-tree", "-r", "-z", "-M", old, new))
               if c.status == "R"]
    assert [(c.source, c.path) for c in renamed] == [(b"moved.txt", b"renamed.txt")]


def test_ls_tree_and_ls_files_records_match_cat_file(two_trees):
    repo, _, new = two_trees
    entries = tree_records(git(repo, "ls-tree", "-r", "-z", new))
    assert {e.path for e in entries} >= {b"tab\there.txt", b"caf\xe9.txt", b"sub", b"link"}
    for entry in entries:
        kind = git(repo, "cat-file", "-t", entry.object_id).decode().strip() \
            if entry.mode != "160000" else "commit"
        assert kind == entry.type
    top = {e.path: e for e in tree_records(git(repo, "ls-tree", "-z", new))}
    assert top[b"dir"].mode == "040000" and top[b"dir"].type == "tree"
    staged = {e.path: e for e in index_records(git(repo, "ls-files", "-s", "-z"))}
    assert staged[b"sub"].mode == "160000" and staged[b"sub"].stage == 0
    assert {e.path: e.object_id for e in entries} == {p: e.object_id for p, e in staged.items()}


def test_a_record_of_another_shape_is_a_clear_error():
    with pytest.raises(WorkspaceError, match="diff-tree --raw"):
        raw_records(b"diff --git a/x b/x\n")
    with pytest.raises(WorkspaceError, match="ls-files -s"):
        index_records(b"100644 abc\0")
    with pytest.raises(WorkspaceError, match="ls-tree"):
        tree_records(b"100644 blob abc path-without-tab\0")
