"""Checkpoints survive a hostile model's git commands: refs deleted, reflogs expired and
`git gc --prune=now` lose neither the user's state at the start, nor any checkpoint, nor the
user's branches and tags (undo puts deleted ones back). Run with a real bash, as the model would."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_core.workspace import Workspace, WorkspaceError
from tests.fixtures.repos import git
from tests.test_workspace_support import bash, files

WIPE = (
    "git checkout -- . && git clean -fdq"
    " && git for-each-ref --format='delete %(refname)' refs/navtui | git update-ref --stdin"
    " && git reflog expire --expire=now --all && git gc -q --prune=now"
)


def exists(repo: Path, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=repo).returncode == 0


def test_deleted_refs_and_a_pruning_gc_lose_no_checkpoint(git_repo: Path):
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    (git_repo / "notes.txt").write_text("the user's untracked notes\n")
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    first = ws.begin("s")
    bash(git_repo, "echo step one >> README.md")
    one = ws.checkpoint(1)
    after_one = files(git_repo)
    bash(git_repo, WIPE)
    assert not exists(git_repo, first.commit)  # the repository itself lost them

    ws.checkpoint(2)
    assert exists(git_repo, first.commit) and exists(git_repo, one.commit)
    assert git(git_repo, "rev-parse", "refs/navtui/s/0").strip() == first.commit
    assert ws.sessions() == ["s"]
    ws.restore(1)
    assert files(git_repo) == after_one
    ws.restore(0)
    assert files(git_repo) == before
    ws.close()

    resumed = Workspace.open(git_repo)
    assert [c.index for c in resumed.attach("s")] == [0]


def test_a_session_goes_on_after_the_wipe_and_undo_brings_everything_back(git_repo: Path,
                                                                          tmp_path: Path):
    from agent_core.policy import AutoPolicy
    from tests.test_session import make_session, write_script

    from agent_core.events import Notice

    git(git_repo, "branch", "feature")
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    (git_repo / "notes.txt").write_text("the user's untracked notes\n")
    before = files(git_repo)
    outputs = [f"Thought: Clean up.\nAction: bash git branch -D feature && {WIPE}",
               "Thought: Done.\nAction: submit"]
    session, _, events = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    try:
        session.start()
        session.decide(AutoPolicy().decide(session.propose()))
        assert session.finished is None, session.finished
        session.undo()
    finally:
        session.close()
    assert files(git_repo) == before
    assert git(git_repo, "branch", "--list", "feature").strip() == "feature"
    assert any("put back branches and tags" in e.message and "refs/heads/feature" in e.message
               for e in events if isinstance(e, Notice))


def test_a_deleted_branch_comes_back_on_undo(git_repo: Path):
    git(git_repo, "checkout", "-qb", "feature")
    (git_repo / "feature.txt").write_text("the user's feature\n")
    git(git_repo, "add", "feature.txt")
    git(git_repo, "commit", "-qm", "feature work")
    git(git_repo, "tag", "-a", "v1", "-m", "release")
    tip = git(git_repo, "rev-parse", "feature").strip()
    tag = git(git_repo, "rev-parse", "refs/tags/v1").strip()
    git(git_repo, "checkout", "-q", "main")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "git branch -D feature && git tag -d v1"
                   " && git reflog expire --expire=now --all && git gc -q --prune=now")
    assert not exists(git_repo, tip)
    ws.checkpoint(1)
    report = ws.restore(0)
    assert report.restored_refs == ["refs/heads/feature", "refs/tags/v1"]
    assert git(git_repo, "rev-parse", "feature").strip() == tip
    assert git(git_repo, "rev-parse", "refs/tags/v1").strip() == tag
    assert git(git_repo, "show", "feature:feature.txt") == "the user's feature\n"


def test_a_rewritten_store_object_is_refused_not_restored(git_repo: Path):
    """Outside the sandbox the store is writable: what comes back from it is hash-checked."""
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    ws = Workspace.open(git_repo)
    first = ws.begin("s")
    for pack in (git_repo / ".git" / "navtui" / "store" / "objects" / "pack").glob("*.pack"):
        pack.chmod(0o644)
        data = bytearray(pack.read_bytes())
        for at in range(12, len(data) - 20, 7):  # every object in it, header and trailer kept
            data[at] ^= 0xFF
        pack.write_bytes(bytes(data))
    bash(git_repo, WIPE)
    with pytest.raises(WorkspaceError, match="cannot give them back"):
        ws.checkpoint(1)
    assert not exists(git_repo, first.commit)


def test_sessions_and_resume_work_when_the_refs_went_while_navtui_was_not_running(git_repo: Path):
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo step one >> README.md")
    ws.checkpoint(1)
    ws.close()
    bash(git_repo, WIPE)

    again = Workspace.open(git_repo)
    assert again.sessions() == ["s"]
    assert [c.index for c in again.attach("s")] == [0, 1]
    again.restore(0)
    assert files(git_repo) == before
    again.delete_session("s")
    assert again.sessions() == []
    assert not (git_repo / ".git" / "navtui" / "store").exists()  # the last session took it


def test_a_wipe_after_the_last_checkpoint_is_healed_before_undo_looks(git_repo: Path):
    """A process the model left behind may wipe the refs after the step was checkpointed: the
    check before undo, the saved state and the patch still find every checkpoint."""
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo step >> README.md")
    ws.checkpoint(1)
    bash(git_repo, WIPE.replace("git checkout -- . && git clean -fdq && ", ""))
    assert ws.foreign_changes() == []
    assert "+step" in ws.patch()
    ws.save_state("before-undo")
    ws.restore(0)
    assert files(git_repo) == before


def test_a_store_that_cannot_be_written_leaves_the_checkpoint_and_says_so(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    objects = git_repo / ".git" / "navtui" / "store" / "objects"
    shutil.rmtree(objects)  # neither a pack nor a loose object can go in now,
    objects.write_text("not a directory\n")  # as a full or broken disk would fail them
    bash(git_repo, "echo more >> README.md")
    one = ws.checkpoint(1)
    assert exists(git_repo, one.commit) and "+more" in ws.step_diff(1)
    assert any("could not keep this checkpoint" in line for line in ws.git_warnings())
