"""Files inside submodules and nested git repositories are in checkpoints: step diffs show
edits made in them, undo puts them back; their own history is left as it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import agent_core.git.control_files.nested as nested
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_hostile import arm
from tests.test_workspace_support import bash


def test_edits_inside_a_nested_repository_show_in_the_step_diff_and_undo(git_repo: Path):
    inner = make_repo(git_repo / "nested", {"n.txt": "n\n", "keep.txt": "k\n"})
    (inner / "draft.txt").write_text("untracked in the nested repo\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo changed >> nested/n.txt && echo new > nested/new.txt"
                   " && rm nested/draft.txt")
    ws.checkpoint(1)
    diff = ws.step_diff(1)
    assert "diff --git a/nested/n.txt b/nested/n.txt" in diff and "+changed" in diff
    assert "+++ b/nested/new.txt" in diff and "--- a/nested/draft.txt" in diff
    assert "keep.txt" not in diff

    report = ws.restore(0)
    assert (inner / "n.txt").read_text() == "n\n"
    assert not (inner / "new.txt").exists()
    assert (inner / "draft.txt").read_text() == "untracked in the nested repo\n"
    assert {"nested/n.txt", "nested/new.txt", "nested/draft.txt"} <= set(report.changed_paths)
    assert git(inner, "status", "--porcelain") == "?? draft.txt\n"


def test_a_submodule_edit_shows_and_is_undone(git_repo: Path, tmp_path: Path):
    library = make_repo(tmp_path / "library", {"lib.py": "VERSION = 1\n"})
    git(git_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library),
        "vendor/lib")
    git(git_repo, "commit", "-qm", "submodule")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo 'VERSION = 2' > vendor/lib/lib.py")
    ws.checkpoint(1)
    assert "diff --git a/vendor/lib/lib.py b/vendor/lib/lib.py" in ws.step_diff(1)
    assert "+VERSION = 2" in ws.step_diff(1)
    ws.restore(0)
    assert (git_repo / "vendor/lib/lib.py").read_text() == "VERSION = 1\n"
    assert git(git_repo / "vendor/lib", "status", "--porcelain") == ""


def test_a_nested_repositorys_config_hooks_and_filters_never_run(git_repo: Path, tmp_path: Path):
    inner = make_repo(git_repo / "nested", {"n.txt": "n\n"})
    marks = tmp_path / "marks"
    arm(inner, marks)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo more >> nested/n.txt")
    ws.checkpoint(1)
    assert "+more" in ws.step_diff(1)
    ws.save_state("before-undo")
    ws.restore(0)
    assert (inner / "n.txt").read_text() == "n\n"
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_session_resumed_later_still_undoes_inside_a_nested_repository(git_repo: Path):
    inner = make_repo(git_repo / "nested", {"n.txt": "n\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo one >> nested/n.txt")
    ws.checkpoint(1)
    ws.close()
    again = Workspace.open(git_repo)
    again.attach("s")
    bash(git_repo, "echo two >> nested/n.txt")
    again.checkpoint(2)
    assert "+two" in again.step_diff(2) and "+one" not in again.step_diff(2)
    again.restore(0)
    assert (inner / "n.txt").read_text() == "n\n"


def test_a_big_or_vanished_nested_repository_is_named_not_snapshotted(git_repo: Path,
                                                                       monkeypatch):
    monkeypatch.setattr(nested, "MAX_TRACKED", 2)
    big = make_repo(git_repo / "big", {"1.txt": "1\n", "2.txt": "2\n", "3.txt": "3\n"})
    small = make_repo(git_repo / "small", {"s.txt": "s\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    assert any(line.startswith("big (") and "over 2" in line for line in ws.outside_checkpoints())
    bash(git_repo, "echo x >> big/1.txt && rm -rf small")
    ws.checkpoint(1)
    assert "big/1.txt" not in ws.step_diff(1)
    ws.restore(0)
    assert (big / "1.txt").read_text() == "1\nx\n"
    assert any("small: the nested repository is gone" in line for line in ws.outside_checkpoints())
    assert not small.exists()


def test_edits_inside_a_nested_repository_count_as_foreign_changes(git_repo: Path):
    make_repo(git_repo / "nested", {"n.txt": "n\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    assert ws.foreign_changes() == []
    (git_repo / "nested" / "n.txt").write_text("by hand\n")
    assert ws.foreign_changes() == ["nested/n.txt"]


@pytest.mark.timeout(60)
def test_a_nested_repositorys_own_git_dir_is_never_read(git_repo: Path, tmp_path: Path):
    """Its index, excludes and config may be anything the model wrote (FIFOs that block a
    reader, an include of one): its files are checkpointed and undone all the same."""
    inner = make_repo(git_repo / "nested", {"n.txt": "n\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for name in ("index", "info/exclude"):
        (inner / ".git" / name).unlink(missing_ok=True)
        (inner / ".git/info").mkdir(exist_ok=True)
        os.mkfifo(inner / ".git" / name)
    with (inner / ".git/config").open("a") as config:
        config.write(f"[include]\n\tpath = {fifo}\n[core]\n\tworktree = {tmp_path}\n")
    bash(git_repo, "echo more >> nested/n.txt && echo new > nested/new.txt")
    ws.checkpoint(1)
    assert "+more" in ws.step_diff(1) and "+++ b/nested/new.txt" in ws.step_diff(1)
    ws.restore(0)
    assert (inner / "n.txt").read_text() == "n\n" and not (inner / "new.txt").exists()


def test_a_nested_work_tree_is_read_with_the_outer_repositorys_settings(git_repo: Path):
    """Its own config is never read: `core.fileMode` off in yours holds inside it too."""
    git(git_repo, "config", "core.fileMode", "false")
    make_repo(git_repo / "nested", {"n.txt": "n\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "chmod +x nested/n.txt && echo more >> nested/n.txt")
    ws.checkpoint(1)
    diff = ws.step_diff(1)
    assert "+more" in diff and "new mode" not in diff
