"""Checkpoints, diffs, patches and sessions on real temporary git repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_core.workspace import Workspace, WorkspaceError
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_support import bash, files


def tree_paths(root: Path, commit: str) -> list[str]:
    return git(root, "ls-tree", "-r", "--name-only", "-z", commit).split("\0")[:-1]


def test_checkpoint_zero_holds_uncommitted_and_untracked_not_ignored(git_repo: Path):
    (git_repo / "calc/ops.py").write_text("user edit\n")
    (git_repo / "notes.txt").write_text("untracked\n")
    (git_repo / "calc/ops.pyc").write_bytes(b"ignored")
    ws = Workspace.open(git_repo)
    first = ws.begin("s1")
    assert first.ref == "refs/navtui/s1/0"
    assert git(git_repo, "rev-parse", first.ref).strip() == first.commit
    assert first.head == git(git_repo, "rev-parse", "HEAD").strip()
    assert first.branch == "main"
    paths = tree_paths(git_repo, first.commit)
    assert "notes.txt" in paths and "calc/ops.pyc" not in paths
    assert git(git_repo, "show", f"{first.commit}:calc/ops.py") == "user edit\n"


def test_step_diff_shows_bash_side_effects(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "sed -i 's/ + 1)/)/' calc/ops.py && echo 'log' > out.txt")
    ws.checkpoint(1)
    diff = ws.step_diff(1)
    assert "-    return sum(values) / (len(values) + 1)" in diff
    assert "+    return sum(values) / (len(values))" in diff
    assert "+++ b/out.txt" in diff
    assert ws.step_diff(0) == ""


def test_unchanged_step_reuses_the_commit_and_diffs_are_empty(git_repo: Path):
    ws = Workspace.open(git_repo)
    first = ws.begin("s")
    second = ws.checkpoint(1)
    assert second.commit == first.commit
    assert ws.step_diff(1) == ""
    assert [c.index for c in ws.checkpoints] == [0, 1]
    assert git(git_repo, "rev-parse", "refs/navtui/s/1").strip() == first.commit


def test_diff_between_checkpoints_and_to_the_working_tree(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    (git_repo / "a.txt").write_text("a\n")
    ws.checkpoint(1)
    (git_repo / "b.txt").write_text("b\n")
    ws.checkpoint(2)
    (git_repo / "c.txt").write_text("c\n")
    assert "a.txt" in ws.diff(0, 1) and "b.txt" not in ws.diff(0, 1)
    assert "b.txt" in ws.diff(1, 2) and "a.txt" not in ws.diff(1, 2)
    assert "c.txt" in ws.diff(2) and "b.txt" not in ws.diff(2)
    assert ws.changed_files(0) == ["a.txt", "b.txt", "c.txt"]
    assert ws.changed_files(1, 2) == ["b.txt"]
    assert all(name in ws.session_diff() for name in ("a.txt", "b.txt", "c.txt"))


def test_checkpoints_only_move_forward_and_unknown_ones_are_named(git_repo: Path):
    ws = Workspace.open(git_repo)
    with pytest.raises(WorkspaceError, match="begin"):
        ws.checkpoint(1)
    ws.begin("s")
    ws.checkpoint(2)
    with pytest.raises(WorkspaceError, match="only move forward"):
        ws.checkpoint(2)
    with pytest.raises(WorkspaceError, match=r"have: 0, 2"):
        ws.diff(1)
    assert ws.step_diff(2) == ""


def test_session_ids_must_make_valid_refs(git_repo: Path):
    ws = Workspace.open(git_repo)
    for bad in ("", "a b", "../x", "x.lock", "-x", "a/b"):
        with pytest.raises(WorkspaceError, match="cannot name a git ref"):
            ws.begin(bad)


def test_patch_applies_on_a_clean_checkout_of_the_base(git_repo: Path, tmp_path: Path):
    (git_repo / "logo.bin").write_bytes(bytes(range(256)) * 4)
    git(git_repo, "add", "logo.bin")
    git(git_repo, "commit", "-qm", "binary")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(
        git_repo,
        "git mv calc/ops.py calc/operations.py && sed -i 's/ + 1)/)/' calc/operations.py"
        " && printf '\\x00\\x01new' > logo.bin && printf 'caf\\xc3\\xa9\\n' > 'caf\u00e9 menu.txt'"
        " && rm README.md",
    )
    ws.checkpoint(1)
    patch = ws.patch()
    assert "rename from calc/ops.py" in patch and "GIT binary patch" in patch

    base = tmp_path / "base"
    git(git_repo, "worktree", "add", "-q", "--detach", str(base), ws.checkpoints[0].commit)
    patch_file = tmp_path / "session.patch"
    patch_file.write_text(patch, errors="surrogateescape")
    git(base, "apply", "--check", str(patch_file))
    git(base, "apply", str(patch_file))
    assert files(base) == files(git_repo)


def test_patch_keeps_bytes_that_are_not_utf8(git_repo: Path, tmp_path: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    (git_repo / "latin1.txt").write_bytes(b"caf\xe9\n")
    base = tmp_path / "base"
    git(git_repo, "worktree", "add", "-q", "--detach", str(base), ws.checkpoints[0].commit)
    (tmp_path / "p.patch").write_text(ws.patch(), errors="surrogateescape")
    git(base, "apply", str(tmp_path / "p.patch"))
    assert (base / "latin1.txt").read_bytes() == b"caf\xe9\n"


def test_attach_sessions_and_delete(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("older")
    (git_repo / "x.txt").write_text("x\n")
    ws.checkpoint(1)
    other = Workspace.open(git_repo)
    other.begin("newer")
    assert sorted(ws.sessions()) == ["newer", "older"]

    resumed = Workspace.open(git_repo)
    checkpoints = resumed.attach("older")
    assert checkpoints == ws.checkpoints
    assert "x.txt" in resumed.step_diff(1)
    resumed.restore(0)
    assert not (git_repo / "x.txt").exists()
    resumed.checkpoint(1)

    resumed.delete_session("older")
    assert resumed.sessions() == ["newer"]
    assert git(git_repo, "for-each-ref", "refs/navtui/older/") == ""
    with pytest.raises(WorkspaceError, match="no session 'older'.*newer"):
        Workspace.open(git_repo).attach("older")
    with pytest.raises(WorkspaceError, match="already has checkpoints"):
        Workspace.open(git_repo).begin("newer")


def test_dirty_since_sees_tree_and_head_changes(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    assert not ws.dirty_since(0)
    (git_repo / "x.txt").write_text("x\n")
    assert ws.dirty_since(0)
    ws.checkpoint(1)
    assert not ws.dirty_since(1)
    git(git_repo, "add", "x.txt")
    git(git_repo, "commit", "-qm", "x")
    assert ws.dirty_since(1)
    ws.restore(1)
    assert not ws.dirty_since(1)


def special_files(root: Path) -> None:
    (root / "with space.txt").write_text("spaces\n")
    (root / "ünïcødé ✓.md").write_text("unicode\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("calc/ops.py", root / "link-to-ops")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 16)
    (root / "empty-dir").mkdir()


def test_special_files_survive_undo(git_repo: Path):
    special_files(git_repo)
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(
        git_repo,
        "rm 'with space.txt' 'ünïcødé ✓.md' && chmod -x run.sh && rm link-to-ops"
        " && ln -s README.md link-to-ops && printf 'x' > blob.bin && mkdir -p 'new dir/ü'"
        " && echo n > 'new dir/ü/n.txt' && rm -r calc && echo file > calc",
    )
    ws.checkpoint(1)
    report = ws.restore(0)
    assert files(git_repo) == before
    assert "new dir/ü/n.txt" in report.changed_paths and "calc/ops.py" in report.changed_paths
    assert not (git_repo / "new dir").exists()


def test_gitignore_changes_never_cost_the_user_an_ignored_file(git_repo: Path):
    (git_repo / "secret.pyc").write_text("user's ignored file\n")
    (git_repo / "draft.txt").write_text("untracked, not ignored\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "printf 'draft.txt\\n' > .gitignore && rm draft.txt && echo later > draft.txt")
    ws.checkpoint(1)
    bash(git_repo, "echo 'made while *.pyc was not ignored' > build.pyc")
    ws.checkpoint(2)

    report = ws.restore(0)

    assert (git_repo / "secret.pyc").read_text() == "user's ignored file\n"
    assert (git_repo / "draft.txt").read_text() == "untracked, not ignored\n"
    assert (git_repo / ".gitignore").read_text() == "*.pyc\n__pycache__/\n"
    assert (git_repo / "build.pyc").read_text() == "made while *.pyc was not ignored\n"
    assert "draft.txt" in report.changed_paths


def test_undo_puts_a_submodules_files_back_but_not_its_history(git_repo: Path, tmp_path: Path):
    library = make_repo(tmp_path / "library", {"lib.py": "VERSION = 1\n"})
    git(git_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/lib")
    git(git_repo, "commit", "-qm", "submodule")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(
        git_repo,
        "cd vendor/lib && echo 'VERSION = 2' > lib.py && git commit -qam bump && cd ../.. && rm README.md",
    )
    ws.checkpoint(1)
    assert "vendor/lib" in ws.changed_files(0)
    report = ws.restore(0)
    assert (git_repo / "README.md").exists()
    assert (git_repo / "vendor/lib/lib.py").read_text() == "VERSION = 1\n"
    assert "vendor/lib/lib.py" in report.changed_paths
    assert git(git_repo / "vendor/lib", "log", "-1", "--format=%s").strip() == "bump"


def test_state_dir_never_dirties_the_tree(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    (ws.state_dir / "log.jsonl").write_text("{}\n")
    assert git(git_repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert ws.session_diff() == ""


def test_model_index_changes_are_undone_but_user_staging_kept(git_repo: Path):
    (git_repo / "README.md").write_text("user staged\n")
    git(git_repo, "add", "README.md")
    staged = git(git_repo, "diff", "--cached")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo m > model.txt && git add -A && git rm -q --cached README.md")
    ws.checkpoint(1)
    ws.restore(0)
    assert git(git_repo, "diff", "--cached") == staged
    assert subprocess.run(
        ["git", "diff", "--quiet"], cwd=git_repo
    ).returncode == 0


def test_checkpoints_record_where_head_went(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    steps = [
        ("echo a > a.txt && git add a.txt && git commit -qm a", "main"),
        ("git checkout -q -b feature", "feature"),
        ("git pack-refs --all && echo b > b.txt && git add b.txt && git commit -qm b", "feature"),
        ("git checkout -q --detach HEAD~1", None),
        ("git checkout -q main", "main"),
    ]
    for index, (command, branch) in enumerate(steps, start=1):
        bash(git_repo, command)
        checkpoint = ws.checkpoint(index)
        assert checkpoint.branch == branch
        assert checkpoint.head == git(git_repo, "rev-parse", "HEAD").strip()
    resumed = Workspace.open(git_repo)
    assert [(c.head, c.branch) for c in resumed.attach("s")] == [
        (c.head, c.branch) for c in ws.checkpoints
    ]


def test_a_path_git_cannot_add_is_reported_not_fatal(git_repo: Path):
    """The user's nested repository with no commit yet: git cannot record it (a model's one is
    checkpointed as ordinary files, tests/test_workspace_made_git.py)."""
    bash(git_repo, "mkdir nested && cd nested && git init -q && echo z > z.txt")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo zz > nested/z.txt && echo m > m.txt")
    ws.checkpoint(1)
    assert any("nested" in warning for warning in ws.snapshot_warnings)
    assert ws.changed_files(0) == ["m.txt"]
    ws.restore(0)
    assert not (git_repo / "m.txt").exists()
    assert (git_repo / "nested/z.txt").read_text() == "zz\n"


def test_line_endings_come_back_byte_for_byte_with_autocrlf(git_repo: Path):
    git(git_repo, "config", "core.autocrlf", "true")
    (git_repo / "windows.txt").write_bytes(b"one\r\ntwo\r\n")
    (git_repo / "mixed.txt").write_bytes(b"lf\ncrlf\r\n")
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm windows.txt mixed.txt")
    ws.checkpoint(1)
    ws.restore(0)
    assert files(git_repo) == before
