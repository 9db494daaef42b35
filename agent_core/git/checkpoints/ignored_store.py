"""Ignored files in checkpoints: their own private index and one commit per state of them.

`ignored.scan` decides which ignored files are kept (under the caps); this keeps them: the
private index follows the files with `update-index` (only when their stat signature changed),
a commit is made per distinct tree, and undo rewrites the files from one such commit to another.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_core.git.objects.commits import commit_tree
from agent_core.git.checkpoints.ignored import IgnoredCaps, Signature, scan
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.stamps import FileStamp, file_stamp
from agent_core.git.restore.treeops import apply_tree
from agent_core.git.restore.verified import ObjectCheck


class IgnoredStore:
    """One session's snapshots of ignored files (private index at `index`)."""

    def __init__(self, git: GitRunner, root: Path, index: Path) -> None:
        self._git = git
        self._root = root
        self._index = index
        self._files: set[str] | None = None  # what the private index holds, once read
        self._signature: Signature | None = None
        self._commit: str | None = None
        self._over_cap: set[str] = set()  # directories out for the session
        self._git_entries: set[str] = set()  # `.git`s in the ignored directories walked
        self.git_entries_moved = False  # whether the last snapshot met others than the one before
        self.left_out: dict[str, str] = {}  # path -> why, for every scan so far
        self._stamp: FileStamp | None = None  # the private index as navtui last wrote it
        self.repairs: list[str] = []

    @property
    def over_cap(self) -> set[str]:
        """Ignored directories out for the session (`dir/`), never walked again."""
        return set(self._over_cap)

    @property
    def has_snapshot(self) -> bool:
        """False until the first snapshot, and again after a restore (the files moved)."""
        return self._signature is not None

    def snapshot(self, listing: bytes, caps: IgnoredCaps) -> str | None:
        """A commit of the ignored files listed in `listing` (`ls-files -z -o -i --directory`
        output) that are under `caps`; None when there are none."""
        entries = [os.fsdecode(p) for p in listing.split(b"\0") if p]
        found = scan(self._root, entries, caps, self._over_cap)
        self.left_out.update(found.left_out)
        self.git_entries_moved = found.git_entries != self._git_entries
        self._git_entries = found.git_entries
        if found.signature == self._signature:
            return self._commit
        if self._stamp is not None and file_stamp(self._index) != self._stamp:
            self._rebuild()
        if self._files is None:
            listed = self._git.run("ls-files", "-z", index=self._index) if self._index.exists() else b""
            self._files = {os.fsdecode(p) for p in listed.split(b"\0") if p}
        now = set(found.files)
        dropped = self._files - now
        # Dropped entries go first: an ignored file that became a directory (or the reverse)
        # is otherwise added beside its old entry, which git refuses as a file/directory clash.
        if dropped:
            self._git.run("update-index", "-z", "--force-remove", "--stdin", index=self._index,
                          stdin=b"".join(os.fsencode(p) + b"\0" for p in sorted(dropped)))
        if now:
            self._git.run("update-index", "-z", "--add", "--remove", "--stdin", index=self._index,
                          stdin=b"".join(os.fsencode(p) + b"\0" for p in sorted(now)))
        self._files = now
        empty = self._git.empty_tree
        tree = self._git.line("write-tree", index=self._index) if self._index.exists() else empty
        commit = None
        if tree != empty:
            known = self._commit
            if known is not None and self._git.line("rev-parse", known + "^{tree}") == tree:
                commit = known
            else:
                commit = commit_tree(self._git, self._git.object_directory, tree, [],
                                     "navtui: ignored files")
        self._signature, self._commit = found.signature, commit
        self._stamp = file_stamp(self._index)
        return commit

    def _rebuild(self) -> None:
        """Only navtui writes the private index: one changed behind its back is untrusted, and
        made again from the last commit of the ignored files."""
        self._index.unlink(missing_ok=True)
        if self._commit is not None:
            self._git.run("read-tree", self._commit + "^{tree}", index=self._index)
        self._files = None
        self.repairs.append(f"{self._index} (navtui's private index of ignored files) was changed "
                            "by someone else since navtui wrote it: made again before use")

    def restore(self, current: str | None, wanted: str | None,
                check: ObjectCheck | None = None) -> list[str]:
        """Rewrite the ignored files from commit `current` to commit `wanted` (None: none
        kept); the paths changed. Ignored files neither commit holds are left alone. `check`
        makes sound the objects written (see `apply_tree`)."""
        if current == wanted:
            return []
        if check is not None:
            check.ensure([current or "", wanted or ""])
        old = self._git.line("rev-parse", current + "^{tree}") if current else self._git.empty_tree
        new = self._git.line("rev-parse", wanted + "^{tree}") if wanted else self._git.empty_tree
        self._git.run("read-tree", old, index=self._index)
        changed = apply_tree(self._git, self._index, old, new, keep_ignored=False, check=check)
        self._files, self._signature, self._stamp = None, None, file_stamp(self._index)
        return changed
