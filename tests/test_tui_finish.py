"""Finish helpers on real git repos: commit to a new branch without touching the checkout, save."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_core.git import BranchError, branch_for, commit_patch_to_branch, slugify
from app.finish import save_patch
from tests.fixtures.repos import git

FIX = (
    "diff --git a/calc/ops.py b/calc/ops.py\n"
    "--- a/calc/ops.py\n"
    "+++ b/calc/ops.py\n"
    "@@ -4,4 +4,4 @@ def add(a, b):\n"
    " \n"
    " def average(values):\n"
    '     """Mean of a non-empty list."""\n'
    "-    return sum(values) / (len(values) + 1)\n"
    "+    return sum(values) / len(values)\n"
)


def test_slugify_and_unique_branch_names(git_repo: Path):
    assert slugify("`average()` is off by one!") == "average-is-off-by-one"
    assert slugify("!!!") == "fix"
    assert branch_for(git_repo, "Average is wrong") == "navtui/average-is-wrong"
    git(git_repo, "branch", "navtui/average-is-wrong")
    assert branch_for(git_repo, "Average is wrong") == "navtui/average-is-wrong-2"


def test_commit_to_branch_leaves_head_index_and_tree_alone(git_repo: Path):
    (git_repo / "calc/ops.py").write_text((git_repo / "calc/ops.py").read_text().replace(" + 1)", ")"))
    (git_repo / "mine.txt").write_text("user's own untracked work\n")
    (git_repo / "README.md").write_text("# calc\n\nstaged by the user\n")
    git(git_repo, "add", "README.md")
    status_before = git(git_repo, "status", "--porcelain")
    assert "M  README.md" in status_before
    head_before = git(git_repo, "rev-parse", "HEAD")

    commit = commit_patch_to_branch(git_repo, FIX, "navtui/average", "navtui: fix average")

    assert git(git_repo, "rev-parse", "HEAD") == head_before
    assert git(git_repo, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(git_repo, "status", "--porcelain") == status_before
    assert git(git_repo, "rev-parse", "navtui/average").strip() == commit
    assert git(git_repo, "rev-parse", f"{commit}^").strip() == head_before.strip()
    shown = git(git_repo, "show", f"{commit}:calc/ops.py")
    assert "return sum(values) / len(values)" in shown
    assert git(git_repo, "diff", "--name-only", head_before.strip(), commit).split() == ["calc/ops.py"]


def test_commit_to_branch_errors_say_what_to_do(git_repo: Path):
    with pytest.raises(BranchError, match="no changes"):
        commit_patch_to_branch(git_repo, "", "navtui/x", "m")
    git(git_repo, "branch", "navtui/taken")
    with pytest.raises(BranchError, match="exists already"):
        commit_patch_to_branch(git_repo, FIX, "navtui/taken", "m")
    (git_repo / "calc/ops.py").write_text("def average(values):\n    return 0\n")
    git(git_repo, "commit", "-qam", "rewrite ops")
    with pytest.raises(BranchError, match="Save the patch instead"):
        commit_patch_to_branch(git_repo, FIX, "navtui/late", "m")
    assert "navtui/late" not in git(git_repo, "branch", "--list")


def test_saved_patch_applies_to_a_clean_checkout(git_repo: Path, tmp_path: Path):
    path = save_patch(FIX, tmp_path / "out" / "fix.patch")
    assert path.is_absolute() and path.read_text() == FIX
    subprocess.run(["git", "apply", "--check", str(path)], cwd=git_repo, check=True)
