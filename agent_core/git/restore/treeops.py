"""Rewrite the working tree from one snapshot tree to another, path by path.

Only paths that differ between the two trees are touched. Files that the target's ignore rules
ignore are never deleted (they were the user's, just not snapshotted), and submodules (gitlinks)
are left alone.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_core.git.errors import WorkspaceError
from agent_core.git.objects.records import GITLINK_MODE, raw_records
from agent_core.git.process.runner import GitRunner
from agent_core.git.restore.verified import ObjectCheck

IGNORE_FILE = ".gitignore"


@dataclass(frozen=True)
class TreeChange:
    """One entry of `git diff-tree --raw`: status A/D/M/T with the path and both modes."""

    status: str
    path: str
    old_mode: str
    new_mode: str
    new_id: str = ""


@dataclass(frozen=True)
class BlobChange:
    """A changed file with its blob ids and sizes (0 / empty id where absent)."""

    path: str
    old_id: str
    new_id: str
    old_size: int
    new_size: int

    def summary(self) -> str:
        """A diff-shaped entry naming the file, its size and blob (the content stays in git)."""
        if not self.old_size and self.old_id == NULL_ID:
            what = f"{self.new_size} bytes, blob {self.new_id}"
        elif self.new_id == NULL_ID:
            what = f"deleted ({self.old_size} bytes, blob {self.old_id})"
        else:
            what = (f"{self.old_size} -> {self.new_size} bytes, "
                    f"blob {self.old_id} -> {self.new_id}")
        return (f"diff --git a/{self.path} b/{self.path}\n"
                f"# navtui: {self.path}: {what}; too large to show, "
                "`git cat-file -p BLOB` prints it\n")


NULL_ID = "0" * 40


def raw_changes(git: GitRunner, old: str, new: str) -> bytes:
    """`git diff-tree -r -z --no-renames old new` (what `huge_files` reads)."""
    return git.run("diff-tree", "-r", "-z", "--no-renames", old, new)


def huge_files(git: GitRunner, raw: bytes, limit: int) -> list[BlobChange]:
    """Files in `raw` (from `raw_changes`) whose old or new blob is over `limit` bytes."""
    changes = [(os.fsdecode(c.path), c.old_id, c.new_id) for c in raw_records(raw)
               if GITLINK_MODE not in (c.old_mode, c.new_mode)]
    ids = sorted({i for _, a, b in changes for i in (a, b) if i != NULL_ID})
    if not ids:
        return []
    sizes = git.object_sizes(ids)
    return [
        BlobChange(path, a, b, sizes.get(a, 0), sizes.get(b, 0))
        for path, a, b in changes
        if max(sizes.get(a, 0), sizes.get(b, 0)) > limit
    ]


def diff_raw(git: GitRunner, old: str, new: str) -> list[TreeChange]:
    """Per-path changes from tree `old` to tree `new` (no rename pairing)."""
    out = git.run("diff-tree", "-r", "-z", "--no-renames", old, new)
    return [TreeChange(c.status, os.fsdecode(c.path), c.old_mode, c.new_mode, c.new_id)
            for c in raw_records(out)]


def _inside(root: Path, rel: str) -> bool:
    """Whether every directory on the way to `rel` is a real directory under `root`: an undo
    that wrote a file or a symlink where one was (an ignore file, written first) has made the
    paths below it gone, or made them lead elsewhere, where nothing may be deleted or asked."""
    at = root
    for part in Path(rel).parts[:-1]:
        at = at / part
        try:
            if not stat.S_ISDIR(os.lstat(at).st_mode):
                return False
        except OSError:
            return False
    return True


def _remove(root: Path, rel: str) -> None:
    """Delete a file or symlink, then any parent directories this left empty."""
    path = root / rel
    if not _inside(root, rel):
        return
    try:
        path.unlink()
    except (FileNotFoundError, IsADirectoryError):
        return
    except OSError as error:
        raise WorkspaceError(
            f"cannot remove {rel} while undoing: {error.strerror}. Make its directory writable "
            f"(`chmod u+w {shlex.quote(str(path.parent))}`) and undo again."
        ) from None
    for parent in path.parents:
        if parent == root:
            break
        try:
            parent.rmdir()
        except OSError:
            break


def _nul_join(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _checkout(git: GitRunner, index: Path, paths: list[str]) -> None:
    if paths:
        git.run("checkout-index", "-f", "-u", "-z", "--stdin", index=index, stdin=_nul_join(paths))


REGULAR_MODES = ("100644", "100755")


def _in_place(root: Path, change: TreeChange) -> bool:
    """True for a regular file modified in place that is safe to rewrite through its inode."""
    if change.status != "M" or change.old_mode not in REGULAR_MODES or change.new_mode not in REGULAR_MODES:
        return False
    try:
        st = os.lstat(root / change.path)
    except OSError:
        return False
    # A hard link could point outside the repository: those go through checkout-index.
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def _rewrite(git: GitRunner, changes: list[TreeChange]) -> list[TreeChange]:
    """Write modified regular files in place from their blobs, byte for byte (no filters);
    returns the changes that could not be written so (checkout-index does those).

    Much faster than checkout-index's unlink-and-create on many files, and exact whatever the
    repository's attributes say.
    """
    failed = []
    for change, data in zip(changes, git.cat_blobs([c.new_id for c in changes])):
        path = git.root / change.path
        try:
            # Overwrite, then cut to length: truncating to zero first makes ext4 flush each file.
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.truncate(len(data))
            if change.old_mode != change.new_mode:
                mode = os.lstat(path).st_mode & 0o7777
                mode = mode | (mode & 0o444) >> 2 if change.new_mode == "100755" else mode & ~0o111
                os.chmod(path, mode)
        except OSError:
            failed.append(change)
    return failed


def _ignored(git: GitRunner, index: Path, paths: list[str]) -> set[str]:
    """The subset of `paths` (not in `index`) that the working tree's ignore rules ignore."""
    if not paths:
        return set()
    out = git.run(
        "check-ignore", "-z", "--stdin", index=index, stdin=_nul_join(paths), ok_codes=(0, 1)
    )
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def apply_tree(
    git: GitRunner, index: Path, current: str, target: str, *, keep_ignored: bool = True,
    check: ObjectCheck | None = None,
) -> list[str]:
    """Turn a working tree that matches tree `current` into tree `target`; returns changed paths.

    `index` is the private index and must match `current`; afterwards it matches `target`, with
    stat data kept for unchanged entries so the next `git add -A` stays cheap. Paths the ignore
    rules ignore are not deleted unless `keep_ignored` is False (a tree of ignored files).
    With `check`, the trees walked and the blobs written are made sound first (undo never
    writes an object that does not hash to its id).
    """
    if check is not None:
        check.trees(current, target)
    changes = [
        c for c in diff_raw(git, current, target) if GITLINK_MODE not in (c.old_mode, c.new_mode)
    ]
    if check is not None:
        check.ensure(c.new_id for c in changes if c.status != "D")
    git.run("read-tree", "-m", "-i", current, target, index=index)
    root = git.root
    is_ignore_file = [Path(c.path).name == IGNORE_FILE for c in changes]
    # Ignore files first: whether a leftover file is the user's ignored file depends on them.
    for change, ignore_file in zip(changes, is_ignore_file):
        if ignore_file and change.status == "D":
            _remove(root, change.path)
    _checkout(git, index, [c.path for c, i in zip(changes, is_ignore_file) if i and c.status != "D"])
    rest = [c for c, i in zip(changes, is_ignore_file) if not i]
    deleted = [c.path for c in rest if c.status == "D" and _inside(root, c.path)]
    kept = _ignored(git, index, deleted) if keep_ignored else set()
    for change in rest:
        if change.status in "DT" and change.path not in kept:
            _remove(root, change.path)
    rewritable = [c for c in rest if _in_place(root, c)]
    left = _rewrite(git, rewritable) if rewritable else []
    written = {c.path for c in rewritable} - {c.path for c in left}
    _checkout(git, index, [c.path for c in rest if c.status != "D" and c.path not in written])
    return sorted(c.path for c in changes if c.path not in kept)
