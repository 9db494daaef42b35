"""Where HEAD points (commit and branch), and moving it back to a recorded position."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_core.git.process.runner import GitRunner
from agent_core.git.process.safe_files import read_regular
from agent_core.git.process.stamps import FileStamp, file_stamp

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
    try:  # (never a link followed, a FIFO waited on or a huge file read)
        content = read_regular(git_dir / "HEAD", 4096).decode("utf-8", "replace").strip()
    except OSError:
        content = ""
    if content.startswith("ref: "):
        ref = content[5:].strip()
        if ref.endswith("/.invalid"):  # reftable keeps the real HEAD elsewhere
            ref = git.exit_code("symbolic-ref", "-q", "HEAD")[1] or ref
        return HeadState(commit if code == 0 else None, _short(ref))
    return HeadState(commit if code == 0 else None, None)


Stamp = tuple[FileStamp | None, ...]


class HeadWatcher:
    """Reads HEAD again only when a file that stores refs has changed since the last read.

    Git replaces ref files by renaming a new file over them, so (inode, size, mtime) of HEAD,
    the branch's loose ref, packed-refs and reftable's table list change on every update.
    """

    def __init__(self, git: GitRunner, git_dir: Path, common_dir: Path) -> None:
        self._git = git
        self._git_dir = git_dir
        self._common_dir = common_dir
        self._stamp: Stamp | None = None
        self._head: HeadState | None = None

    def _files(self, head: HeadState | None) -> list[Path]:
        files = [
            self._git_dir / "HEAD",
            self._common_dir / "packed-refs",
            self._common_dir / "reftable" / "tables.list",
        ]
        if head is not None and head.branch is not None:
            files.append(self._common_dir / _full_ref(head.branch))
        return files

    @staticmethod
    def _stamp_of(files: list[Path]) -> Stamp:
        return tuple(file_stamp(path) for path in files)

    def read(self) -> HeadState:
        if self._head is not None and self._stamp_of(self._files(self._head)) == self._stamp:
            return self._head
        head = read_head(self._git, self._git_dir)
        self._head, self._stamp = head, self._stamp_of(self._files(head))
        return head

    def forget(self) -> None:
        """Force the next `read` to ask git (after navtui itself moved HEAD)."""
        self._head = self._stamp = None


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
