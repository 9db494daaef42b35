"""Undo after destructive commands run in a real bash: everything the user had comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.workspace import Workspace
from tests.test_workspace_support import bash, files, project_with_user_changes, user_state

DESTRUCTIVE = [
    "rm -rf src",
    "git checkout -- .",
    "git reset --hard HEAD~1",
    "git commit -am x",
    "git add -A && git commit -qm everything && git clean -fd",
    "git stash -u",
    "git checkout -q -b model-branch && echo more >> README.md && git commit -qam on-branch",
    "git checkout -q -f --detach HEAD~1",
    # undo writes the ignore file back first, over the directory: its old entry is then gone
    "rm .gitignore && mkdir .gitignore && echo inside > .gitignore/x",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return project_with_user_changes(tmp_path / "repo")


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_undo_restores_files_head_and_user_changes(repo: Path, command: str):
    before_files, before_state = files(repo), user_state(repo)
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, command)
    ws.checkpoint(1)
    assert files(repo) != before_files or user_state(repo) != before_state

    report = ws.restore(0)

    assert files(repo) == before_files
    after = user_state(repo)
    assert {k: after[k] for k in ("head", "branch", "staged", "status")} == {
        k: before_state[k] for k in ("head", "branch", "staged", "status")
    }
    assert report.changed_paths or report.head_moved
    assert [c.index for c in ws.checkpoints] == [0]


def test_undo_reports_head_moved_only_when_it_did(repo: Path):
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "rm -rf src")
    ws.checkpoint(1)
    assert ws.restore(0).head_moved is False
    bash(repo, "git commit -qam x")
    ws.checkpoint(1)
    report = ws.restore(0)
    assert report.head_moved is True
    assert "notes.txt" not in report.changed_paths


def test_rewind_to_a_middle_step_keeps_earlier_steps(repo: Path):
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "echo one > one.txt")
    ws.checkpoint(1)
    after_one = files(repo)
    bash(repo, "rm -rf src docs && git commit -qam 'model commit'")
    ws.checkpoint(2)
    bash(repo, "echo three > three.txt && git reset -q --hard HEAD~2")
    ws.checkpoint(3)

    report = ws.restore(1)

    assert files(repo) == after_one
    assert (repo / "one.txt").read_text() == "one\n"
    assert report.changed_paths == sorted(report.changed_paths)
    assert "three.txt" not in files(repo)
    assert [c.index for c in ws.checkpoints] == [0, 1]
    ws.checkpoint(2)
    assert ws.step_diff(2) == ""


def test_undo_after_model_left_a_conflicted_merge(repo: Path):
    before_files, before_state = files(repo), user_state(repo)
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(
        repo,
        "git stash -q -u && git checkout -q -b other && echo theirs > README.md && git commit -qam t"
        " && git checkout -q - && echo ours > README.md && git commit -qam o"
        " && (git merge other >/dev/null 2>&1 || true)",
    )
    assert (repo / ".git/MERGE_HEAD").exists()
    ws.checkpoint(1)
    ws.restore(0)
    assert not (repo / ".git/MERGE_HEAD").exists()
    assert files(repo) == before_files
    assert user_state(repo)["staged"] == before_state["staged"]
    Workspace.open(repo)


def test_undo_every_step_of_a_session_run_through_the_executor(repo: Path):
    from agent_core.actions import Bash
    from agent_core.executor import Executor

    ws = Workspace.open(repo)
    ws.begin("s")
    seen = [(files(repo), user_state(repo))]
    with Executor(repo, command_timeout=30) as executor:
        executor.execute(Bash("export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=m"
                              " GIT_COMMITTER_EMAIL=m@x"))
        for index, command in enumerate(
            ["rm -rf src", "git checkout -- .", "git commit -qam x", "git reset -q --hard HEAD~1"],
            start=1,
        ):
            observation = executor.execute(Bash(command))
            assert observation.exit_code == 0, observation
            ws.checkpoint(index)
            seen.append((files(repo), user_state(repo)))
    for index in (3, 1, 0):
        ws.restore(index)
        expected_files, expected_state = seen[index]
        assert files(repo) == expected_files
        assert user_state(repo)["head"] == expected_state["head"]
    assert user_state(repo) == seen[0][1]


def test_undo_brings_back_the_conflict_of_a_stash_pop(tmp_path: Path):
    from tests.fixtures.repos import git, make_repo

    root = make_repo(tmp_path / "repo", {"a.txt": "base\n"})
    (root / "a.txt").write_text("stashed\n")
    git(root, "stash", "-q")
    (root / "a.txt").write_text("committed\n")
    git(root, "commit", "-qam", "diverge")
    bash(root, "git stash pop -q || true")
    conflicts = git(root, "ls-files", "-u")
    assert conflicts.count("a.txt") == 3
    before = files(root)
    ws = Workspace.open(root)
    ws.begin("s")
    bash(root, "git checkout -q -- . 2>/dev/null; git reset -q --hard && echo m > m.txt")
    ws.checkpoint(1)
    assert git(root, "ls-files", "-u") == ""
    ws.restore(0)
    assert git(root, "ls-files", "-u") == conflicts
    assert files(root) == before


def test_read_only_and_private_files_come_back_with_their_permissions(repo: Path):
    (repo / "notes.txt").chmod(0o444)
    (repo / "src/scratch.py").chmod(0o600)
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "rm -f notes.txt src/scratch.py && echo new > notes.txt")
    ws.checkpoint(1)
    ws.restore(0)
    assert (repo / "notes.txt").stat().st_mode & 0o777 == 0o444
    assert (repo / "src/scratch.py").stat().st_mode & 0o777 == 0o600
    assert (repo / "notes.txt").read_text() == "user's untracked notes\n"


@pytest.mark.parametrize("command", ["git reset --hard HEAD~1", "git add -A && git commit -qm x"])
def test_a_split_index_is_read_whole_and_comes_back(tmp_path: Path, command: str):
    # core.splitIndex keeps most entries in .git/sharedindex.<id>, found only beside the index
    from tests.fixtures.repos import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "core.splitIndex", "true")
    project_with_user_changes(repo)
    git(repo, "update-index", "--split-index")
    assert any(p.name.startswith("sharedindex.") for p in (repo / ".git").iterdir())
    before_files, before_state = files(repo), user_state(repo)
    before_git = sorted(p.name for p in (repo / ".git").iterdir())
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, command)
    ws.checkpoint(1)
    assert "src/app.py" in ws.step_diff(1) or ws.step_diff(1) == ""
    ws.close()
    again = Workspace.open(repo)
    (repo / ".git/navtui/checkpoints/s.index").unlink()  # resume makes it again from the user's
    again.attach("s")
    again.restore(0)
    assert files(repo) == before_files
    after = user_state(repo)
    assert {k: after[k] for k in ("head", "branch", "staged", "status")} == {
        k: before_state[k] for k in ("head", "branch", "staged", "status")
    }
    left = {p.name for p in (repo / ".git").iterdir()} - set(before_git)
    assert not [name for name in left if name.startswith("index.navtui")], left


@pytest.mark.parametrize("where", ["global", "repository"])
def test_a_split_index_in_the_users_config_leaves_navtuis_own_indexes_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str,
):
    # navtui's private indexes are read through its own git directory, which keeps no shared
    # index: with `core.splitIndex=true` in the user's global config every session stopped at
    # its start ("sharedindex.<id>: index file open failed")
    from tests.fixtures.repos import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    if where == "global":
        config = tmp_path / "gitconfig"
        config.write_text("[core]\n\tsplitIndex = true\n")
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    else:
        git(repo, "config", "core.splitIndex", "true")
    project_with_user_changes(repo)
    before_files, before_state = files(repo), user_state(repo)
    ws = Workspace.open(repo)
    ws.begin("s")
    for step, command in enumerate(["echo a >> src/app.py", "rm notes.txt && echo n > new.txt",
                                    "git add -A && git commit -qm x"], start=1):
        bash(repo, command)
        ws.checkpoint(step)
    assert "+a" in ws.step_diff(1) and "new.txt" in ws.step_diff(2)
    ws.restore(1)
    assert (repo / "src/app.py").read_text().endswith("a\n") and not (repo / "new.txt").exists()
    ws.restore(0)
    assert files(repo) == before_files
    after = user_state(repo)
    assert {k: after[k] for k in ("head", "branch", "staged", "status")} == {
        k: before_state[k] for k in ("head", "branch", "staged", "status")
    }
    private = repo / ".git/navtui"
    assert not [p for p in private.rglob("sharedindex.*")], "navtui's indexes are kept whole"


def test_files_the_user_marked_unchanged_are_still_checkpointed_and_come_back(tmp_path: Path):
    # `update-index --assume-unchanged` / `--skip-worktree` (kept for local config edits) made
    # git skip those files in navtui's copy of the index too: the user's own edit was not in
    # checkpoint 0, the model's edits were in no step, and undo lost both
    from tests.fixtures.repos import git

    repo = project_with_user_changes(tmp_path / "repo")
    (repo / "config.py").write_text("DEBUG = False\n")
    (repo / "local.py").write_text("PORT = 80\n")
    (repo / "sparse.txt").write_text("not checked out\n")
    git(repo, "add", "config.py", "local.py", "sparse.txt")
    git(repo, "commit", "-qm", "settings")
    (repo / "config.py").write_text("DEBUG = True  # the user's local setting\n")
    (repo / "local.py").write_text("PORT = 8080  # the user's local setting\n")
    git(repo, "update-index", "--assume-unchanged", "config.py")
    git(repo, "update-index", "--skip-worktree", "local.py", "sparse.txt")
    (repo / "sparse.txt").unlink()  # as a sparse checkout leaves a path it does not check out
    flags = git(repo, "ls-files", "-v")
    before_files, before_state = files(repo), user_state(repo)
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "echo 'DEBUG = 2' > config.py && echo 'PORT = 1' > local.py")
    ws.checkpoint(1)
    diff = ws.step_diff(1)
    assert "+DEBUG = 2" in diff and "-DEBUG = True  # the user's local setting" in diff
    assert "+PORT = 1" in diff and "sparse.txt" not in diff
    ws.restore(0)
    assert files(repo) == before_files
    assert git(repo, "ls-files", "-v") == flags  # the user's marks are theirs again
    assert user_state(repo) == before_state


def test_core_ignore_stat_in_the_users_config_does_not_hide_edits(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    # with core.ignoreStat=true in the global config git marked every file navtui added as
    # unchanged, so no later edit of it was seen and undo did nothing
    repo = project_with_user_changes(tmp_path / "repo")
    config = tmp_path / "gitconfig"
    config.write_text("[core]\n\tignoreStat = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    before = files(repo)
    ws = Workspace.open(repo)
    ws.begin("s")
    for step in (1, 2, 3):
        bash(repo, f"echo 'step {step}' >> src/app.py")
        ws.checkpoint(step)
        assert f"+step {step}" in ws.step_diff(step)
    ws.restore(1)
    assert (repo / "src/app.py").read_text().endswith("step 1\n")
    ws.restore(0)
    assert files(repo) == before


def test_a_planted_link_beside_a_split_index_is_never_written_through(tmp_path: Path):
    # the model can write into .git: a `sharedindex.*` and links where navtui's temporary
    # copy of the index could go must not turn navtui's copy into a write outside the repo
    import os

    from tests.fixtures.repos import git

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    project_with_user_changes(repo)
    (repo / ".git/sharedindex.0000000000000000000000000000000000000000").write_text("planted")
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file\n")
    for pid in {os.getpid(), *range(1, 400)}:
        (repo / ".git" / f"index.navtui-whole-{pid}").symlink_to(outside)
    (repo / ".git/index.navtui-restore").symlink_to(outside)  # undo's copy, once at this name
    mode = (repo / ".git/index").stat().st_mode
    before = files(repo)
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "echo m > m.txt")
    ws.checkpoint(1)
    ws.restore(0)
    assert outside.read_text() == "the user's file\n"
    assert files(repo) == before
    assert (repo / ".git/index").stat().st_mode == mode  # not the temporary file's 0600
