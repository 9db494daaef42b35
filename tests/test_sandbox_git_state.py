"""Inside the sandbox the model's git works in its own copy-on-write view of every git dir,
and nothing it does there reaches the user's (real bwrap, real git, real overlays): the user's
refs, index, config, hooks, objects and navtui's state under .git/navtui compare byte for byte
before and after, and a plain `git status` outside afterwards runs nothing the model wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.executor import READ_ONLY_GIT_NOTE, Executor
from agent_core.actions import Bash
from agent_core.executor.sandbox import Bubblewrap, check_sandbox
from agent_core.executor.shell import Shell
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo, tree_state
from tests.test_sandbox import needs_bwrap, sandboxed

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap needs Linux")

IDENTITY = ("export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@x.invalid GIT_COMMITTER_NAME=m "
            "GIT_COMMITTER_EMAIL=m@x.invalid")


def plain_status(repo: Path) -> str:
    """`git status` as the user runs it after the session: their config, hooks, fsmonitor."""
    return subprocess.run(["git", "status", "--short"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture
def repo(git_repo: Path, tmp_path: Path) -> Path:
    """The repo with a submodule and a nested repository, a navtui session begun and one
    checkpoint taken (so .git/navtui holds the raw view, nested views, indexes and logs)."""
    library = make_repo(tmp_path / "library", {"lib.py": "VERSION = 1\n"})
    git(git_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library),
        "vendor/lib")
    git(git_repo, "commit", "-qm", "submodule")
    make_repo(git_repo / "nested", {"n.txt": "n\n"})
    workspace = Workspace.open(git_repo)
    workspace.begin("s")
    (git_repo / "nested/n.txt").write_text("changed\n")
    workspace.checkpoint(1)
    workspace.close()
    return git_repo


@needs_bwrap
def test_everyday_git_works_in_the_models_view_and_the_git_dir_stays_byte_for_byte(
    git_repo: Path, tmp_path: Path
):
    (git_repo / "calc/ops.py").write_text("changed by the user\n")
    before = tree_state(git_repo / ".git")
    marker = tmp_path / "pwned"
    launcher = sandboxed(git_repo)
    assert "the model's git works in its own copy-on-write view" in launcher.summary()[-1]
    with Shell(git_repo, timeout=30, launcher=launcher) as sh:
        sh.run(IDENTITY)
        assert sh.run("git status --short").output == " M calc/ops.py\n"
        assert "+changed by the user" in sh.run("git diff").output
        assert sh.run("git stash -q && git status --short && git stash list | wc -l").output == "1\n"
        assert sh.run("git stash pop -q && git status --short").output == " M calc/ops.py\n"
        assert sh.run("git checkout -- calc/ops.py && git status --short").output == ""
        done = sh.run("echo new > added.txt && git add added.txt && git commit -qm 'the model' "
                      "&& git log --format=%s -1 && git status --short")
        assert done.output == "the model\n", done
        sh.restart()  # a timeout or a new .git: the model's view outlives its shell
        assert sh.run("git log --format=%s -1").output == "the model\n"
        for attempt in (f"git config core.fsmonitor 'touch {marker}; false'",
                        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout "
                        "&& chmod +x .git/hooks/post-checkout",
                        "git branch -D main; git tag planted; git update-ref refs/heads/x HEAD",
                        "rm -rf .git/objects/*; rm -f .git/index"):
            sh.run(attempt)
        assert "Device or resource busy" in sh.run("mv .git aside; rm -rf .git").output
    assert tree_state(git_repo / ".git") == before
    assert (git_repo / "calc/ops.py").read_text().startswith("def add(a, b):")
    assert plain_status(git_repo) == "?? added.txt\n"
    assert not marker.exists()


@needs_bwrap
def test_navtuis_state_and_git_control_files_never_change(repo: Path, tmp_path: Path):
    state, marker = repo / ".git/navtui", tmp_path / "pwned"
    assert (state / "raw-git").is_dir() and list((state / "checkpoints").glob("*.nested"))
    before = tree_state(repo / ".git")
    with Shell(repo, timeout=30, launcher=sandboxed(repo)) as sh:
        # Everyday git goes on: a commit in the submodule, in the model's view of its git dir.
        sub = sh.run(f"{IDENTITY}; cd vendor/lib && echo 'VERSION = 2' > lib.py && "
                     "git commit -qam two && git log --oneline | wc -l; cd /testbed")
        assert sub.output == "2\n", sub
        assert "Read-only file system" in sh.run("echo 'gitdir: /tmp/x' > vendor/lib/.git").output
        for attempt in [
            "mkdir -p /tmp/x && echo /tmp/x > .git/navtui/raw-git/commondir",
            f"printf '[filter \"x\"]\\n\\tclean = touch {marker}\\n' > .git/navtui/raw-git/config",
            "echo '* filter=x' > .git/navtui/raw-git/info/attributes",
            "echo /tmp/x > .git/objects/info/alternates",
            "for d in .git/navtui/checkpoints/*.nested; do touch $d/planted; done",
            "rm -rf .git/navtui; mkdir .git/navtui",
            f"git config -f .git/modules/vendor/lib/config core.fsmonitor 'touch {marker}'",
            f"echo 'touch {marker}' > .git/modules/vendor/lib/hooks/pre-commit",
            "echo '* filter=x' > .git/info/attributes; echo ../../elsewhere > .git/commondir",
            "mv .git/modules .git/modules-aside",
        ]:
            sh.run(attempt)
    assert tree_state(repo / ".git") == before
    assert git(repo / "vendor/lib", "log", "--oneline").count("\n") == 1
    plain_status(repo)
    subprocess.run(["git", "status"], cwd=repo / "vendor/lib", capture_output=True, check=True)
    assert not marker.exists()


@needs_bwrap
def test_a_linked_worktree_and_its_main_repository_stay_as_they_were(git_repo: Path,
                                                                     tmp_path: Path):
    worktree = tmp_path / "feature"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    linked = git_repo / ".git/worktrees/feature"
    before = tree_state(git_repo / ".git")
    (worktree / "calc/ops.py").write_text("changed\n")
    with Shell(worktree, timeout=30, launcher=sandboxed(worktree)) as sh:
        assert sh.run("git status --short").output == " M calc/ops.py\n"
        assert sh.run("git add -A && git diff --cached --name-only").output == "calc/ops.py\n"
        assert sh.run("git rev-parse --abbrev-ref HEAD").output == "feature\n"
        assert "Read-only file system" in sh.run("echo 'gitdir: /tmp' > .git").output
        sh.run(f"git config core.fsmonitor 'touch {tmp_path}/pwned'")
        for name in ("commondir", "gitdir", "navtui/planted"):
            sh.run(f"mkdir -p {linked}/navtui; echo /tmp/elsewhere > {linked}/{name}")
    assert tree_state(git_repo / ".git") == before
    staged = git(worktree, "diff", "--cached", "--name-only")
    assert staged == "" and not (tmp_path / "pwned").exists()


@needs_bwrap
def test_a_git_dir_reached_through_a_link_or_a_gitdir_file_in_the_tree_is_covered(
    git_repo: Path,
):
    """`.git` a symlink into the working tree; a nested `.git` file naming a git dir kept in the
    working tree: both git dirs are the model's own view, and the real ones stay as they were."""
    (git_repo / ".git").rename(git_repo / ".repo-git")
    (git_repo / ".git").symlink_to(".repo-git")
    inner = make_repo(git_repo / "inner", {"i.txt": "i\n"})
    (inner / ".git").rename(git_repo / "inner-git")
    (inner / ".git").write_text("gitdir: ../inner-git\n")
    before = tree_state(git_repo / ".repo-git"), tree_state(git_repo / "inner-git")
    with Shell(git_repo, timeout=30, launcher=sandboxed(git_repo)) as sh:
        sh.run(IDENTITY)
        assert sh.run("git add -A 2>/dev/null && git commit -qm all && git log --format=%s -1").output == "all\n"
        assert sh.run("cd inner && echo j > i.txt && git commit -qam j && git log --format=%s -1"
                      ).output == "j\n"
        sh.run("cd /testbed; echo planted > .repo-git/config; echo x > inner-git/HEAD")
    assert (tree_state(git_repo / ".repo-git"), tree_state(git_repo / "inner-git")) == before


@needs_bwrap
def test_a_new_nested_git_dir_is_covered_from_the_next_command(git_repo: Path):
    """A step that made a `.git`: the shell starts again (cwd and exports kept) with it under
    the model's view; what the step itself wrote there is all that reaches the disk."""
    with Executor(git_repo, command_timeout=30, launcher=sandboxed(git_repo)) as ex:
        ex.execute(Bash(f"{IDENTITY}; mkdir n && cd n && git init -q && git commit -q "
                        "--allow-empty -m first"))
        assert ex.launcher.uncovered() == ["n/.git"]
        assert ex.cover_git_entries(["n/.git"]) and ex.launcher.uncovered() == []
        assert not ex.cover_git_entries(["n/.git"])  # covered already: no second restart
        made = tree_state(git_repo / "n/.git")
        shown = ex.execute(Bash("pwd; echo $GIT_AUTHOR_NAME; git commit -q --allow-empty -m "
                                "second && git log --format=%s | wc -l; rm -rf .git"))
        assert shown.output.startswith("/testbed/n\nm\n2\n"), shown
        assert "Device or resource busy" in shown.output
    assert tree_state(git_repo / "n/.git") == made


@needs_bwrap
def test_without_overlays_the_git_dirs_are_read_only_and_the_model_is_told(git_repo: Path):
    launcher = Bubblewrap(git_repo, check_sandbox().bwrap or "", overlay=False)
    assert launcher.git_read_only and "read-only" in launcher.label
    assert launcher.notice is not None and "cannot give it a copy-on-write view" in launcher.notice
    before = tree_state(git_repo / ".git")
    with Executor(git_repo, command_timeout=30, launcher=launcher) as ex:
        assert ex.execute(Bash("git log --format=%s && git status --short")).output == "initial\n"
        failed = ex.execute(Bash("echo x > x.txt && git add x.txt"))
        assert failed.exit_code != 0 and "Read-only file system" in failed.output
        assert failed.error == READ_ONLY_GIT_NOTE
        assert ex.execute(Bash("touch /usr/x")).error is None  # not git: no note
    assert tree_state(git_repo / ".git") == before


@needs_bwrap
def test_the_models_views_are_removed_when_the_session_ends(git_repo: Path, tmp_path: Path):
    views = tmp_path / "views"
    views.mkdir()
    launcher = Bubblewrap(git_repo, check_sandbox().bwrap or "", git_views=views)
    with Executor(git_repo, command_timeout=30, launcher=launcher) as ex:
        ex.execute(Bash("git add -A; chmod 000 .git/objects/*/ .git/refs"))
        assert len(list(views.iterdir())) == 1
    assert list(views.iterdir()) == []


@needs_bwrap
def test_a_git_dir_shown_writable_at_its_own_path_is_read_only_there(git_repo: Path,
                                                                     tmp_path: Path):
    """`--writable` of a directory holding the repository shows it again at its real path:
    its git dir (and a nested one's) are read-only there, the model's view at /testbed."""
    make_repo(git_repo / "inner", {"i.txt": "i\n"})
    before = tree_state(git_repo / ".git"), tree_state(git_repo / "inner/.git")
    launcher = sandboxed(git_repo, writable=(tmp_path,))
    with Shell(git_repo, timeout=30, launcher=launcher) as sh:
        for git_dir in (git_repo / ".git", git_repo / "inner/.git"):
            attempt = sh.run(f"echo planted >> {git_dir}/config")
            assert "Read-only file system" in attempt.output, attempt
        assert sh.run(f"echo edit > {git_repo}/calc/new.txt").exit_code == 0
        assert sh.run("git config core.x y && git config core.x").output == "y\n"
    assert (tree_state(git_repo / ".git"), tree_state(git_repo / "inner/.git")) == before
    assert (git_repo / "calc/new.txt").read_text() == "edit\n"


@needs_bwrap
def test_views_a_killed_navtui_left_go_when_the_next_one_makes_its_own(git_repo: Path,
                                                                       tmp_path: Path):
    views = tmp_path / "views"
    views.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = views / f"navtui-git-view-{dead.pid}-x1"
    (left / "layer/work/work").mkdir(parents=True)
    (left / "layer/work/work").chmod(0)
    alive = views / f"navtui-git-view-{os.getpid()}-x2"
    alive.mkdir()
    launcher = Bubblewrap(git_repo, check_sandbox().bwrap or "", git_views=views)
    with Shell(git_repo, timeout=30, launcher=launcher) as sh:
        assert sh.run("git status --short").exit_code == 0
    assert not left.exists() and alive.exists()
    launcher.close()
