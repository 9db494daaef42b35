"""navtui keeps a large private index split (`core.splitIndex`, its shared part in navtui's raw
view): every checkpoint stays exact, undo and resume work, a shared part changed or gone is
noticed, and a step that made a file (git adds it: its ignore rules) still runs two git
processes. The size from which an index is split is lowered here so that a small repository
is split too."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.git.checkpoints import snapshot
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_git_processes import TREE, GitLog
from tests.test_workspace_support import bash, files, user_state

STEPS = [
    "echo x >> pkg0/mod0/file0.py",
    "sed -i 's/return 3/return 33/' pkg0/mod1/file3.py",
    "rm pkg2/mod0/file2.py && echo new > pkg2/mod0/new.py",
    "mkdir -p pkg2/deep && echo d > pkg2/deep/f.py && chmod +x pkg1/mod1/file1.py",
    "git add -A && git commit -qm 'the model commits'",
    "echo after >> pkg1/mod0/file4.py",
]


@pytest.fixture(autouse=True)
def split_every_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "SPLIT_INDEX_BYTES", 1)


def shared_files(root: Path) -> list[Path]:
    return sorted((root / ".git/navtui/raw-git").glob("sharedindex.*"))


def plain_tree(root: Path) -> str:
    """The working tree's tree as git itself writes it (through a scratch index)."""
    return bash(root, "GIT_INDEX_FILE=$(mktemp -u) && git add -A && git write-tree && rm -f $GIT_INDEX_FILE").strip()


def tree_of_last(ws: Workspace) -> str:
    return ws._snapshots[ws.checkpoints[-1].commit].tree


def session_after(root: Path, steps: list[str]) -> Workspace:
    """A session on `root` that has checkpointed each of `steps` (the index split by then)."""
    ws = Workspace.open(root)
    ws.begin("s")
    for step, command in enumerate(steps, start=1):
        bash(root, command)
        ws.checkpoint(step)
    return ws


def test_a_split_private_index_keeps_every_step_exact_through_undo_and_resume(tmp_path):
    root = tmp_path / "repo"
    make_repo(root, {**TREE, ".gitignore": "*.log\n"})
    (root / "pkg0/user.txt").write_text("the user's untracked file\n")
    before_files, before_state = files(root), user_state(root)
    ws = Workspace.open(root)
    ws.begin("s")
    held = {}
    for step, command in enumerate(STEPS, start=1):
        bash(root, command)
        ws.checkpoint(step)
        assert tree_of_last(ws) == plain_tree(root), command
        held[step] = files(root)
    assert shared_files(root), "the private index is split, its shared part in the raw view"
    assert "+after" in ws.step_diff(6) and ws.step_diff(6).count("diff --git ") == 1
    assert ws._repairs == [] and ws._raw.repairs == []  # nothing taken for tampering
    ws.restore(3)
    assert files(root) == held[3]
    ws.close()
    again = Workspace.open(root)
    again.attach("s")
    assert again._index_path() in again._git.split_indexes  # it stays split
    bash(root, "echo resumed >> pkg0/mod0/file0.py")
    again.checkpoint(4)
    assert tree_of_last(again) == plain_tree(root)
    assert "+resumed" in again.step_diff(4)
    again.restore(0)
    assert files(root) == before_files
    assert user_state(root) == before_state
    assert again._repairs == [] and again._raw.repairs == []


def test_a_new_file_on_a_split_index_runs_two_git_processes(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", TREE)
    log = GitLog(tmp_path, monkeypatch)
    ws = Workspace.open(root)
    ws.begin("s")
    for step in (1, 2, 3):  # the watch laid, the index split, the session's cat-file started
        bash(root, f"echo '# warm {step}' > pkg0/mod0/warm{step}.py")
        ws.checkpoint(step)
        ws.step_diff(step)
    assert shared_files(root)
    for step in (4, 5):
        log.take()
        bash(root, f"echo '# step {step}' > pkg1/mod1/new{step}.py")
        ws.checkpoint(step)
        diff = ws.step_diff(step)
        ran = log.take()
        assert sorted(ran) == ["add -A", "write-tree"], ran
        assert f"+# step {step}" in diff and tree_of_last(ws) == plain_tree(root)


def test_a_shared_part_gone_at_resume_is_made_again(tmp_path):
    root = make_repo(tmp_path / "repo", TREE)
    ws = session_after(root, STEPS[:3])
    held = files(root)
    ws.close()
    for shared in shared_files(root):  # as git expires one unused for two weeks
        shared.unlink()
    again = Workspace.open(root)
    again.attach("s")
    bash(root, "echo later >> pkg1/mod0/file4.py")
    again.checkpoint(4)
    assert "+later" in again.step_diff(4) and again.step_diff(4).count("diff --git ") == 1
    assert tree_of_last(again) == plain_tree(root)
    again.restore(3)
    assert files(root) == held


def test_a_shared_part_changed_behind_navtuis_back_is_not_trusted(tmp_path):
    root = make_repo(tmp_path / "repo", TREE)
    ws = session_after(root, STEPS[:2])
    # a shared part that marks every entry unchanged: a status or an add would then see nothing
    (shared,) = shared_files(root)
    forged = tmp_path / "forged.index"
    env = f"GIT_INDEX_FILE={forged}"
    bash(root, f"{env} git read-tree HEAD && {env} git ls-files -z | "
               f"{env} xargs -0 git update-index --assume-unchanged")
    written = tmp_path / "written"
    written.write_bytes(forged.read_bytes()[:-20] + shared.read_bytes()[-20:])  # the name's sum
    written.replace(shared)
    bash(root, "echo hidden >> pkg1/mod0/file4.py")
    ws.checkpoint(3)
    assert "+hidden" in ws.step_diff(3)
    assert tree_of_last(ws) == plain_tree(root)
    assert any("private index" in repair for repair in ws._repairs)


def test_a_small_private_index_is_kept_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "SPLIT_INDEX_BYTES", 10_000_000)
    root = make_repo(tmp_path / "repo", TREE)
    git(root, "config", "core.splitIndex", "true")  # the repository's own setting is the user's
    ws = Workspace.open(root)
    ws.begin("s")
    bash(root, "echo x >> pkg0/mod0/file0.py")
    ws.checkpoint(1)
    assert shared_files(root) == []
    assert tree_of_last(ws) == plain_tree(root)
    ws.close()
    again = Workspace.open(root)
    again.attach("s")
    assert again._index_path() not in again._git.split_indexes


def test_a_link_or_directory_named_like_a_shared_part_is_removed_from_the_raw_view(tmp_path):
    root = make_repo(tmp_path / "repo", TREE)
    ws = Workspace.open(root)
    ws.begin("s")
    bash(root, "echo x >> pkg0/mod0/file0.py")
    ws.checkpoint(1)
    view = root / ".git/navtui/raw-git"
    outside = tmp_path / "outside.index"
    outside.write_bytes((root / ".git/index").read_bytes())
    (view / ("sharedindex." + "1" * 40)).symlink_to(outside)
    (view / ("sharedindex." + "2" * 40)).mkdir()
    bash(root, "echo y >> pkg0/mod0/file0.py")
    ws.checkpoint(2)
    assert not (view / ("sharedindex." + "1" * 40)).is_symlink()
    assert not (view / ("sharedindex." + "2" * 40)).exists()
    assert outside.read_bytes() == (root / ".git/index").read_bytes()
    assert any("not written by navtui: removed" in line for line in ws.git_warnings())
    assert "+y" in ws.step_diff(2) and tree_of_last(ws) == plain_tree(root)
