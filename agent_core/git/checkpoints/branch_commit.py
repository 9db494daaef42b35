"""A session's changes committed as a new branch, the user's checkout untouched.

The branch is built with a private index from HEAD plus the session's patch, so HEAD, the index
and the working tree stay as they are. Git runs through `runner.GitRunner` (none of the
repository's hooks, filters or fsmonitor run).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from agent_core.git.errors import WorkspaceError
from agent_core.git.objects.patches import patch_bytes
from agent_core.git.process.runner import GitRunner


class BranchError(WorkspaceError):
    """The branch could not be made; the message says what to do instead."""


def slugify(text: str, max_length: int = 40) -> str:
    """`Average is off by one!` -> `average-is-off-by-one`."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "-".join(words)[:max_length].strip("-")
    return slug or "fix"


def _branch_exists(git: GitRunner, branch: str) -> bool:
    return git.exit_code("rev-parse", "-q", "--verify", f"refs/heads/{branch}")[0] == 0


def _has_identity(git: GitRunner) -> bool:
    """True when the repository (or the user's config) names who commits."""
    return all(git.exit_code("config", key)[0] == 0 for key in ("user.name", "user.email"))


def branch_for(repo_path: Path | str, issue_title: str) -> str:
    """`navtui/<slug>`, with `-2`, `-3`, ... appended when that branch exists already."""
    git = GitRunner(Path(repo_path))
    base = f"navtui/{slugify(issue_title)}"
    name, n = base, 2
    while _branch_exists(git, name):
        name, n = f"{base}-{n}", n + 1
    return name


def commit_patch_to_branch(repo_path: Path | str, patch: str, branch: str, message: str) -> str:
    """Commit `patch` on top of HEAD as new branch `branch`; returns the commit id.

    HEAD, the index and the working tree stay as they are.
    """
    if not patch.strip():
        raise BranchError("there are no changes to commit")
    git = GitRunner(Path(repo_path))
    if _branch_exists(git, branch):
        raise BranchError(f"branch {branch} exists already; pick another name")
    has_head = git.exit_code("rev-parse", "-q", "--verify", "HEAD^{commit}")[0] == 0
    with tempfile.TemporaryDirectory(prefix="navtui-finish-") as tmp:
        index = Path(tmp) / "index"
        git.run("read-tree", "HEAD" if has_head else "--empty", index=index)
        try:
            git.run("apply", "--cached", "--binary", "-", index=index, stdin=patch_bytes(patch))
        except WorkspaceError as error:
            raise BranchError(
                "the session's changes do not apply on top of HEAD (they overlap uncommitted work "
                f"that was there before the session): {error}. "
                "Save the patch instead, or commit your own changes first."
            ) from None
        tree = git.line("write-tree", index=index)
        parents = ["-p", "HEAD"] if has_head else []
        committer = GitRunner(git.root, identity=not _has_identity(git))
        commit = committer.line("commit-tree", "--no-gpg-sign", tree, *parents, "-m", message)
    git.run("update-ref", f"refs/heads/{branch}", commit, "0" * 40)
    return commit
