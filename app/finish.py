"""What to do with the session's changes at the end: commit them to a new branch, or save a patch.

The branch is built with a private index from HEAD plus the session's patch, so the user's
checkout (HEAD, index, working tree) is not touched.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import git


class FinishError(Exception):
    """The chosen ending could not be done; the message says what to do instead."""


def slugify(text: str, max_length: int = 40) -> str:
    """`Average is off by one!` -> `average-is-off-by-one`."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "-".join(words)[:max_length].strip("-")
    return slug or "fix"


def branch_for(repo_path: Path | str, issue_title: str) -> str:
    """`navtui/<slug>`, with `-2`, `-3`, ... appended when that branch exists already."""
    repo = git.Repo(repo_path)
    existing = {head.name for head in repo.heads}
    base = f"navtui/{slugify(issue_title)}"
    name, n = base, 2
    while name in existing:
        name, n = f"{base}-{n}", n + 1
    return name


def _identity_env(repo: git.Repo) -> dict[str, str]:
    """Author/committer variables for repos with no configured identity (git refuses otherwise)."""
    reader = repo.config_reader()
    if reader.has_option("user", "email") and reader.has_option("user", "name"):
        return {}
    return {
        "GIT_AUTHOR_NAME": "navtui", "GIT_AUTHOR_EMAIL": "navtui@localhost",
        "GIT_COMMITTER_NAME": "navtui", "GIT_COMMITTER_EMAIL": "navtui@localhost",
    }


def commit_patch_to_branch(repo_path: Path | str, patch: str, branch: str, message: str) -> str:
    """Commit `patch` on top of HEAD as new branch `branch`; returns the commit id.

    HEAD, the index and the working tree stay as they are.
    """
    if not patch.strip():
        raise FinishError("there are no changes to commit")
    repo = git.Repo(repo_path)
    if branch in {head.name for head in repo.heads}:
        raise FinishError(f"branch {branch} exists already; pick another name")
    has_head = repo.head.is_valid()
    with tempfile.TemporaryDirectory(prefix="navtui-finish-") as tmp:
        patch_file = Path(tmp) / "session.patch"
        patch_file.write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index"), **_identity_env(repo)}
        run = repo.git.execute
        if has_head:
            run(["git", "read-tree", "HEAD"], env=env)
        else:
            run(["git", "read-tree", "--empty"], env=env)
        try:
            run(["git", "apply", "--cached", "--binary", str(patch_file)], env=env)
        except git.GitCommandError as error:
            raise FinishError(
                "the session's changes do not apply on top of HEAD (they overlap uncommitted work "
                f"that was there before the session): {error.stderr.strip()}. "
                "Save the patch instead, or commit your own changes first."
            ) from None
        tree = run(["git", "write-tree"], env=env).strip()
        parents = ["-p", "HEAD"] if has_head else []
        commit = run(["git", "commit-tree", tree, *parents, "-m", message], env=env).strip()
    repo.git.update_ref(f"refs/heads/{branch}", commit, "")
    return commit


def save_patch(patch: str, path: Path | str) -> Path:
    """Write the patch to `path` (parents created); returns the absolute path."""
    target = Path(path).expanduser().resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(patch, encoding="utf-8")
    return target
