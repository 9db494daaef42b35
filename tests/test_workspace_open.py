"""Opening a repository: what navtui refuses, with messages that say how to fix it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.workspace import Workspace, WorkspaceError
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_git_processes import GitLog
from tests.test_workspace_support import bash, files


def test_missing_path(tmp_path: Path):
    with pytest.raises(WorkspaceError, match="does not exist"):
        Workspace.open(tmp_path / "nowhere")


def test_file_is_not_a_directory(tmp_path: Path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(WorkspaceError, match="not a directory"):
        Workspace.open(tmp_path / "f")


def test_plain_directory_says_how_to_git_init(tmp_path: Path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(WorkspaceError, match="git init"):
        Workspace.open(tmp_path / "plain")


def test_bare_repository_says_to_clone(tmp_path: Path):
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    with pytest.raises(WorkspaceError, match="git clone"):
        Workspace.open(tmp_path / "bare.git")


def test_merge_in_progress_is_refused(git_repo: Path):
    git(git_repo, "checkout", "-q", "-b", "other")
    (git_repo / "README.md").write_text("theirs\n")
    git(git_repo, "commit", "-qam", "theirs")
    git(git_repo, "checkout", "-q", "main")
    (git_repo / "README.md").write_text("ours\n")
    git(git_repo, "commit", "-qam", "ours")
    subprocess.run(["git", "merge", "other"], cwd=git_repo, capture_output=True)
    with pytest.raises(WorkspaceError, match="git merge --abort"):
        Workspace.open(git_repo)


def test_rebase_in_progress_is_refused(git_repo: Path):
    git(git_repo, "checkout", "-q", "-b", "other")
    (git_repo / "README.md").write_text("theirs\n")
    git(git_repo, "commit", "-qam", "theirs")
    git(git_repo, "checkout", "-q", "main")
    (git_repo / "README.md").write_text("ours\n")
    git(git_repo, "commit", "-qam", "ours")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "rebase", "other"],
        cwd=git_repo, capture_output=True,
    )
    with pytest.raises(WorkspaceError, match="git rebase --abort"):
        Workspace.open(git_repo)


def test_subdirectory_opens_the_top_level(git_repo: Path):
    ws = Workspace.open(git_repo / "calc")
    assert ws.root == git_repo.resolve()
    assert ws.state_dir == git_repo.resolve() / ".git" / "navtui"


def test_begin_touches_nothing_of_the_user(git_repo: Path):
    (git_repo / "calc/ops.py").write_text("changed\n")
    (git_repo / "README.md").write_text("staged\n")
    git(git_repo, "add", "README.md")
    (git_repo / "new.txt").write_text("untracked\n")
    index_bytes = (git_repo / ".git/index").read_bytes()
    status = git(git_repo, "status", "--porcelain", "--untracked-files=all")
    refs = git(git_repo, "for-each-ref", "refs/heads", "refs/stash")
    tree = files(git_repo)

    ws = Workspace.open(git_repo)
    ws.begin("s")
    ws.checkpoint(1)

    assert (git_repo / ".git/index").read_bytes() == index_bytes
    assert git(git_repo, "status", "--porcelain", "--untracked-files=all") == status
    assert git(git_repo, "for-each-ref", "refs/heads", "refs/stash") == refs
    assert files(git_repo) == tree
    assert ws.state_dir.is_dir()


def test_unborn_branch_works(tmp_path: Path):
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("user's file\n")
    ws = Workspace.open(root)
    first = ws.begin("s")
    assert (first.head, first.branch) == (None, "main")
    bash(root, "echo model > b.txt && git add -A && git commit -qm first && rm a.txt")
    ws.checkpoint(1)
    assert ws.changed_files(0) == ["a.txt", "b.txt"]

    report = ws.restore(0)

    assert report.head_moved
    assert files(root) == {"a.txt": ("file", b"user's file\n")}
    assert subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root, capture_output=True
    ).returncode != 0
    assert git(root, "status", "--porcelain") == "?? a.txt\n"


def test_worktree_of_another_repo(git_repo: Path, tmp_path: Path):
    git(git_repo, "worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt"))
    ws = Workspace.open(tmp_path / "wt")
    ws.begin("s")
    (tmp_path / "wt/README.md").unlink()
    ws.checkpoint(1)
    ws.restore(0)
    assert (tmp_path / "wt/README.md").exists()
    assert git(tmp_path / "wt", "symbolic-ref", "HEAD").strip() == "refs/heads/wt"
    assert git(git_repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"



def test_the_git_directory_itself_is_refused_with_the_top_named(git_repo: Path):
    with pytest.raises(WorkspaceError, match=r"inside a \.git directory: pass the repository's top"):
        Workspace.open(git_repo / ".git")


def test_a_git_dir_in_the_environment_does_not_redirect_the_open(git_repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    other = make_repo(tmp_path / "other", {"x.txt": "x\n"})
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    assert Workspace.open(git_repo).root == git_repo.resolve()


def test_finding_the_repository_is_one_git_process_and_no_gitpython(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
):
    log = GitLog(tmp_path, monkeypatch)  # a logging `git` first on PATH
    code = (
        "import sys; from pathlib import Path; from agent_core.git.process.repo import find_repo; "
        f"print(find_repo(Path({str(git_repo)!r}))[0]); print('git' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).parent.parent)
    assert result.stdout.split() == [str(git_repo.resolve()), "False"], result.stderr
    assert log.take() == ["rev-parse --is-bare-repository"]
