"""Helpers shared by the workspace tests: run bash in a repo, capture everything the user has."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.fixtures.repos import git, make_repo

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "model", "GIT_AUTHOR_EMAIL": "model@navtui.invalid",
    "GIT_COMMITTER_NAME": "model", "GIT_COMMITTER_EMAIL": "model@navtui.invalid",
}

PROJECT = {
    "src/app.py": "def main():\n    return 1\n",
    "src/util/helpers.py": "X = 1\n",
    "docs/guide.md": "# Guide\n",
    "README.md": "# project\n",
    ".gitignore": "*.log\nbuild/\n",
}


def bash(root: Path, command: str) -> str:
    """Run `command` in a real bash at `root`, as the model would."""
    env = {**os.environ, **GIT_IDENTITY}
    result = subprocess.run(
        ["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


def files(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every file and symlink under `root` except .git: kind ('file', 'exec', 'link') + content."""
    found: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        names = filenames + [d for d in os.listdir(dirpath) if os.path.islink(os.path.join(dirpath, d))]
        for name in set(names):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel == ".git" or rel.startswith(".git/"):
                continue
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path).encode())
            else:
                kind = "exec" if path.stat().st_mode & stat.S_IXUSR else "file"
                found[rel] = (kind, path.read_bytes())
    return found


def user_state(root: Path) -> dict[str, str]:
    """What the user would notice besides files: HEAD, branch, staged changes, stash, branches."""
    head = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    branch = subprocess.run(
        ["git", "symbolic-ref", "-q", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    return {
        "head": head,
        "branch": branch,
        "staged": git(root, "diff", "--cached", "--binary"),
        "stash": git(root, "stash", "list"),
        "branches": git(root, "for-each-ref", "refs/heads/"),
        "status": git(root, "status", "--porcelain=v1", "--untracked-files=all", "--ignored"),
    }


def project_with_user_changes(root: Path) -> Path:
    """Two commits, then the user's own uncommitted work: modified, staged, untracked, ignored."""
    make_repo(root, PROJECT)
    (root / "src/app.py").write_text("def main():\n    return 2\n")
    git(root, "commit", "-q", "-am", "second")
    (root / "src/app.py").write_text("def main():\n    return 3  # user edit\n")
    (root / "README.md").write_text("# project\n\nstaged by the user\n")
    git(root, "add", "README.md")
    (root / "notes.txt").write_text("user's untracked notes\n")
    (root / "src/scratch.py").write_text("print('untracked')\n")
    (root / "debug.log").write_text("ignored log\n")
    return root
