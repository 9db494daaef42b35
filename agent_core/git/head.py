"""Where HEAD points (commit and branch), and moving it back to a recorded position."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_core.git.runner import GitRunner

BRANCH_PREFIX = "refs/heads/"


@dataclass(frozen=True)
class HeadState:
    """HEAD's commit (None on an unborn branch) and branch short name (None when detached)."""

    commit: str | None
    branch: str | None


def _full_ref(branch: str) -> str:
    return branch if branch.startswith("refs/") else BRANCH_PREFIX + branch


def _short(ref: str) -> str:
    return ref.removeprefix(BRANCH_PREFIX)


def read_head(git: GitRunner, git_dir: Path) -> HeadState:
    """Read HEAD with one git process: the symbolic part comes straight from `<git_dir>/HEAD`."""
    code, commit = git.exit_code("rev-parse", "-q", "--verify", "HEAD^{commit}")
    content = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    if content.startswith("ref: "):
        ref = content[5:].strip()
        if ref.endswith("/.invalid"):  # reftable keeps the real HEAD elsewhere
            ref = git.exit_code("symbolic-ref", "-q", "HEAD")[1] or ref
        return HeadState(commit if code == 0 else None, _short(ref))
    return HeadState(commit if code == 0 else None, None)


def move_head(git: GitRunner, git_dir: Path, target: HeadState, reason: str) -> bool:
    """Put HEAD (and the target's branch) back where `target` says; True if anything moved."""
    current = read_head(git, git_dir)
    moved = False
    if target.branch is None:
        if current.branch is not None or current.commit != target.commit:
            assert target.commit is not None, "a detached HEAD always names a commit"
            git.run("update-ref", "--no-deref", "-m", reason, "HEAD", target.commit)
            moved = True
        return moved
    ref = _full_ref(target.branch)
    code, value = git.exit_code("rev-parse", "-q", "--verify", ref + "^{commit}")
    branch_commit = value if code == 0 else None
    if branch_commit != target.commit:
        if target.commit is None:
            git.run("update-ref", "-m", reason, "-d", ref)
        else:
            git.run("update-ref", "-m", reason, ref, target.commit)
        moved = True
    if current.branch != target.branch:
        git.run("symbolic-ref", "-m", reason, "HEAD", ref)
        moved = True
    return moved
