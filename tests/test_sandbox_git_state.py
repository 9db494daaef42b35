"""navtui's own state under .git/navtui and git's control files are out of the model's reach
inside the sandbox (real bwrap, real git, a real workspace with a nested repo and a submodule):
the planted `raw-git/commondir` of the issue, files under `checkpoints/`, a submodule's config
and hooks, `.git/info`, a linked worktree's `commondir` all fail; everyday git still works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.executor.shell import Shell
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_sandbox import needs_bwrap, sandboxed

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap needs Linux")

EVIL_CONFIG = "[filter \"x\"]\n\tclean = \"sh -c 'touch /testbed/pwned; cat'\"\n"


def tree_of(path: Path) -> dict[str, bytes]:
    """Every file under `path` and its bytes (symlinks as their target)."""
    found = {}
    for item in sorted(path.rglob("*")):
        if item.is_symlink():
            found[str(item.relative_to(path))] = str(item.readlink()).encode()
        elif item.is_file():
            found[str(item.relative_to(path))] = item.read_bytes()
    return found


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
def test_navtuis_private_git_dirs_cannot_be_planted_from_inside(repo: Path):
    state = repo / ".git/navtui"
    assert (state / "raw-git").is_dir() and list((state / "checkpoints").glob("*.nested"))
    before = tree_of(state)
    with Shell(repo, timeout=30, launcher=sandboxed(repo)) as sh:
        attempts = [
            "mkdir -p /tmp/x && echo /tmp/x > .git/navtui/raw-git/commondir",
            f"printf '{EVIL_CONFIG}' > .git/navtui/raw-git/config",
            "mkdir .git/navtui/raw-git/objects/info/planted",
            "echo '* filter=x' > .git/navtui/raw-git/info/attributes",
            "echo /tmp/x > .git/navtui/raw-git/objects/info/alternates",
            "touch .git/navtui/checkpoints/planted",
            "for d in .git/navtui/checkpoints/*.nested; do touch $d/planted; done",
            "rm -rf .git/navtui/checkpoints",
            "mkdir .git/navtui/sessions",
            "mv .git/navtui .git/navtui-aside",
            "rm -rf .git/navtui",
        ]
        for attempt in attempts:
            obs = sh.run(attempt)
            assert obs.exit_code != 0, (attempt, obs)
        assert sh.run("ls .git/navtui/raw-git/commondir").exit_code != 0
    assert tree_of(state) == before
    assert not (repo / "pwned").exists()


@needs_bwrap
def test_submodule_configs_hooks_and_info_are_read_only_inside(repo: Path):
    module = repo / ".git/modules/vendor/lib"
    config, info = (module / "config").read_bytes(), tree_of(repo / ".git/info")
    with Shell(repo, timeout=30, launcher=sandboxed(repo)) as sh:
        attempts = [
            "git config -f .git/modules/vendor/lib/config core.fsmonitor 'touch /testbed/pwned'",
            "echo 'touch /testbed/pwned' > .git/modules/vendor/lib/hooks/pre-commit",
            "mv .git/modules/vendor/lib .git/modules/vendor/aside",
            "mv .git/modules .git/modules-aside",
            "echo '* filter=x' > .git/info/attributes",
            "mv .git/info .git/info-aside",
        ]
        for attempt in attempts:
            obs = sh.run(attempt)
            assert obs.exit_code != 0, (attempt, obs)
        # Everyday git goes on: status in both, a commit in the submodule.
        assert sh.run("git status --short").exit_code == 0
        sub = sh.run("cd vendor/lib && echo 'VERSION = 2' > lib.py && git -c user.name=t "
                     "-c user.email=t@t.invalid commit -qam two && git log --oneline | wc -l")
        assert sub.output == "2\n", sub
    assert (module / "config").read_bytes() == config
    assert not (module / "hooks/pre-commit").exists()
    assert tree_of(repo / ".git/info") == info
    assert not (repo / "pwned").exists()
    status = subprocess.run(["git", "status", "--short"], cwd=repo, capture_output=True,
                            text=True, check=True)
    assert not (repo / "pwned").exists() and "vendor/lib" in status.stdout


@needs_bwrap
def test_a_linked_worktrees_control_files_are_read_only_inside(git_repo: Path, tmp_path: Path):
    worktree = tmp_path / "feature"
    git(git_repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    linked = git_repo / ".git/worktrees/feature"
    before = {name: (linked / name).read_bytes() for name in ("commondir", "gitdir")}
    with Shell(worktree, timeout=30, launcher=sandboxed(worktree)) as sh:
        for name in ("commondir", "gitdir"):
            obs = sh.run(f"echo /tmp/elsewhere > {linked}/{name}")
            assert obs.exit_code != 0, obs
        assert sh.run(f"touch {linked}/navtui/planted").exit_code != 0
        assert sh.run(f"mv {linked} {linked}-aside").exit_code != 0
        assert sh.run("echo x > added.txt && git add added.txt && git status --short"
                      ).output == "A  added.txt\n"
    assert {name: (linked / name).read_bytes() for name in before} == before
