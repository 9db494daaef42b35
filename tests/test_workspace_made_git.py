"""`.git` entries the model makes in the working tree are git's control data: named in the
step's notice, kept in checkpoints and put back or removed by undo; the directory around one
is checkpointed as ordinary files, never as a gitlink, and navtui's git never enters it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_core.git.control_files import made_git
from agent_core.git_notices import control_left_notices
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo, tree_state
from tests.test_workspace_support import bash

NESTED = ("mkdir n && cd n && git init -q && echo f > f.txt && git add f.txt && "
          "git commit -qm x && git config core.fsmonitor 'touch {marker}; false'")


def tree_listing(repo: Path, commit: str) -> str:
    return git(repo, "ls-tree", "-r", commit)


def as_git_keeps(path: Path) -> dict[str, tuple[int, bytes]]:
    """`tree_state` with the modes git keeps: a directory, a link, an executable or not."""
    return {name: (mode & 0o170100, data) for name, (mode, data) in tree_state(path).items()}


def test_a_repository_the_model_makes_is_named_kept_as_files_and_undone(git_repo: Path,
                                                                         tmp_path: Path):
    marker = tmp_path / "pwned"
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, NESTED.format(marker=marker))
    checkpoint = ws.checkpoint(1)
    listing = tree_listing(git_repo, checkpoint.commit)
    assert "160000" not in listing and "\tn/f.txt\n" in listing
    assert "+++ b/n/f.txt" in ws.step_diff(1)
    [said] = ws.made_git.news()
    assert said.startswith("n/.git (made by the model") and "navtui never enters it" in said
    assert list(ws.made_git.made) == ["n/.git"] == ws.made_git.fresh
    made = as_git_keeps(git_repo / "n/.git")
    bash(git_repo, "echo more > n/g.txt")
    ws.checkpoint(2)
    assert ws.made_git.fresh == [] and ws.made_git.news() == []
    [left] = [n for n in control_left_notices(ws) if "leaves .git entries" in n]
    assert "n/.git" in left
    ws.restore(1)
    assert as_git_keeps(git_repo / "n/.git") == made and not (git_repo / "n/g.txt").exists()
    ws.restore(0)
    assert not (git_repo / "n").exists()
    assert not marker.exists()


def test_a_made_git_dir_removed_later_comes_back_with_undo(git_repo: Path, tmp_path: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, NESTED.format(marker=tmp_path / "pwned") + " && ln -s ../f.txt .git/link")
    ws.checkpoint(1)
    ws.made_git.news()
    made = as_git_keeps(git_repo / "n/.git")
    bash(git_repo, "rm -rf n/.git && echo 'gitdir: /elsewhere' > n/.git")
    ws.checkpoint(2)
    assert any(line.startswith("n/.git (changed by the model") for line in ws.made_git.news())
    ws.restore(1)
    assert as_git_keeps(git_repo / "n/.git") == made
    assert ws.made_git.fresh == ["n/.git"]


def test_a_gitdir_file_in_a_tracked_directory_is_named_and_undone(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "mkdir -p evil/objects evil/refs && echo 'ref: refs/heads/main' > evil/HEAD "
                   "&& echo 'gitdir: ../evil' > calc/.git")
    ws.checkpoint(1)
    assert any(line.startswith("calc/.git (made by the model: a `gitdir:` file")
               for line in ws.made_git.news())
    listing = tree_listing(git_repo, ws.checkpoints[-1].commit)
    assert "160000" not in listing and "calc/ops.py" in listing
    ws.restore(0)
    assert not os.path.lexists(git_repo / "calc/.git")
    assert (git_repo / "calc/ops.py").exists()


@pytest.mark.timeout(60)
def test_navtuis_git_never_enters_a_repository_the_model_made(git_repo: Path):
    """Its HEAD, index and config may block whoever reads them: checkpoints, diffs and undo
    never read them (its files are added as ordinary ones; the .git is read as data, regular
    files only)."""
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "mkdir n && cd n && git init -q && echo f > f.txt && git add f.txt && "
                   "git commit -qm x && rm .git/index && mkfifo .git/index .git/fifo")
    os.unlink(git_repo / "n/.git/HEAD")
    os.mkfifo(git_repo / "n/.git/HEAD")
    ws.checkpoint(1)
    assert "160000" not in tree_listing(git_repo, ws.checkpoints[-1].commit)
    assert "+++ b/n/f.txt" in ws.step_diff(1)
    ws.restore(0)
    assert not (git_repo / "n").exists()


def test_a_resumed_session_still_knows_what_the_model_made(git_repo: Path, tmp_path: Path):
    inner = make_repo(git_repo / "theirs", {"t.txt": "t\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, NESTED.format(marker=tmp_path / "pwned"))
    ws.checkpoint(1)
    ws.close()
    again = Workspace.open(git_repo)
    again.attach("s")
    assert list(again.made_git.made) == ["n/.git"]
    again.restore(0)
    assert not (git_repo / "n").exists() and (inner / ".git").is_dir()


def test_the_users_git_sees_no_gitlink_of_what_navtui_checkpointed(git_repo: Path,
                                                                   tmp_path: Path):
    """The session's patch, applied to the index, carries the model's repository as files."""
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, NESTED.format(marker=tmp_path / "pwned"))
    ws.checkpoint(1)
    patch = ws.patch()
    assert "Subproject commit" not in patch and "+++ b/n/f.txt" in patch
    subprocess.run(["git", "status"], cwd=git_repo, check=True, capture_output=True)
    assert not (tmp_path / "pwned").exists()


def test_a_top_git_link_the_model_replaces_is_put_back_at_once(git_repo: Path, tmp_path: Path):
    """The repository's `.git` is a link (the one `.git` the sandbox cannot mount over): the
    model's own `.git` in its place goes to quarantine, the link comes back."""
    (git_repo / ".git").rename(tmp_path / "real-git")
    (git_repo / ".git").symlink_to(tmp_path / "real-git")
    marker = tmp_path / "pwned"
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, f"rm .git && git init -q && git config core.fsmonitor 'touch {marker}; false'"
                   " && echo more >> README.md")
    ws.checkpoint(1)
    assert os.readlink(git_repo / ".git") == str(tmp_path / "real-git")
    [said] = [line for line in ws.made_git.news() if line.startswith(".git (replaced")]
    kept = Path(said.rpartition(" is in ")[2].rstrip(")"))
    assert (kept / "config").read_text().count("fsmonitor") == 1
    assert "+more" in ws.step_diff(1)
    subprocess.run(["git", "status"], cwd=git_repo, check=True, capture_output=True)
    assert not marker.exists()


def test_a_repository_made_inside_the_users_nested_one_is_kept_as_files_there(git_repo: Path,
                                                                              tmp_path: Path):
    make_repo(git_repo / "theirs", {"t.txt": "t\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "cd theirs && " + NESTED.format(marker=tmp_path / "pwned"))
    ws.checkpoint(1)
    assert "+++ b/theirs/n/f.txt" in ws.step_diff(1)
    assert list(ws.made_git.made) == ["theirs/n/.git"]
    ws.restore(0)
    assert not (git_repo / "theirs/n").exists() and (git_repo / "theirs/t.txt").exists()


def test_the_users_own_git_dir_is_never_taken_for_the_models(git_repo: Path):
    """Without the sandbox the model could replace it; it is named, never kept or removed."""
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "mv .git .git-old && cp -a .git-old .git && rm -rf .git-old && "
                   "echo more >> README.md")
    ws.checkpoint(1)
    [said] = ws.made_git.news()
    assert said.startswith(".git (the repository's own, not the one there at the session's start")
    assert ws.made_git.made == {} and ws.made_git.news() == []
    ws.restore(0)
    assert (git_repo / ".git/HEAD").is_file()


def test_a_made_git_dir_over_the_cap_is_named_and_left_by_undo(git_repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(made_git, "MAX_FILES", 3)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, NESTED.format(marker=tmp_path / "pwned"))
    ws.checkpoint(1)
    assert any(line.startswith("n/.git (a .git the model made, over 3 files")
               for line in ws.outside_checkpoints())
    ws.restore(0)
    assert (git_repo / "n/.git/HEAD").is_file() and not (git_repo / "n/f.txt").exists()
    assert any("n/.git: a .git the model made, too big to keep" in line
               for line in ws.outside_checkpoints())


def test_without_the_sandbox_a_gitlink_the_model_stages_for_its_repository_is_taken_out(
    git_repo: Path, tmp_path: Path
):
    """Issue 34's reproduction 1 with the sandbox off: the model's `git add n` writes your
    index; after the step the gitlink is gone from it and your `git status` runs nothing."""
    marker = tmp_path / "pwned"
    git(git_repo, "add", "README.md")  # your own staged state stays
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, NESTED.format(marker=marker) + " && cd .. && git add n")
    ws.checkpoint(1)
    assert "160000" not in git(git_repo, "ls-files", "-s")
    assert any(line.startswith("n (a gitlink the model staged in your index")
               for line in ws.made_git.news())
    assert git(git_repo, "status", "--short") == "?? n/\n" and not marker.exists()
