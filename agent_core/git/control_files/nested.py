"""Submodules and nested git repositories: their work trees are checkpointed too.

The outer repository's snapshot holds only a gitlink (the nested repository's HEAD commit) for
each of them, so edits inside would be invisible to step diffs and undo. Each nested work tree is
snapshotted through a private index of its own (`git add -A` run over it, as `Workspace` does for
the outer tree), with its objects written into the *outer* repository's object store, so they
stay restorable even if the nested repository's own `.git` is damaged. A checkpoint names one
commit whose tree maps each nested path (percent-quoted: tree entries cannot hold `/`) to its
work tree's tree.

navtui never reads a nested repository's own git dir (its config, index, excludes, a `.git`
file's target): the model may have written any of them. Git runs over the nested work tree
through a private git dir of navtui's (`RawView`, with the outer repository's settings), as it
does for the outer tree.

What stays outside: a nested repository of more than `MAX_TRACKED` files (named once), one with
no commit yet (git cannot record it as a gitlink), and a nested repository's own HEAD, branches
and index (undo puts back its files, not its history).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote_from_bytes, unquote_to_bytes

from agent_core.git.checkpoints.adds import seed_entries
from agent_core.git.objects.commits import commit_tree
from agent_core.git.errors import WorkspaceError
from agent_core.git.checkpoints.rawview import RawView
from agent_core.git.objects.records import GITLINK_MODE, index_records, raw_records, tree_records
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.stamps import FileStamp, file_stamp
from agent_core.git.restore.treeops import apply_tree
from agent_core.git.restore.verified import ObjectCheck

MAX_TRACKED = 20_000
_VANISHED_RETRIES = 5
_SUBJECT = "navtui: work trees of nested repositories"


def _entry_name(path: str) -> str:
    return quote_from_bytes(os.fsencode(path), safe="")


def _path_of(name: str) -> str:
    return os.fsdecode(unquote_to_bytes(name))


def _over(runner: GitRunner, empty_index: Path, limit: int) -> int | None:
    """How many files (not ignored) the work tree of `runner` holds when over `limit`, counted
    by git from an empty index (`empty_index`: a path where no file is) and stopped there; None
    when within it."""
    empty_index.unlink(missing_ok=True)
    process = runner.spawn("ls-files", "-z", "-o", "--exclude-standard",
                           env={"GIT_INDEX_FILE": str(empty_index)})
    assert process.stdout is not None
    count = 0
    try:
        while count <= limit:
            chunk = process.stdout.read(1 << 16)
            if not chunk:
                break
            count += chunk.count(b"\0")
    finally:
        process.kill()
        process.communicate()
    return count if count > limit else None


def gitlinks_after(gitlinks: set[str], listing: bytes, staged: bool = False) -> set[str]:
    """The paths of submodules / nested repositories (mode 160000): all of them in `ls-files
    -s -z` output (`staged`), or `gitlinks` with those that came and went in `diff-tree -r -z`
    output."""
    if staged:
        return {os.fsdecode(e.path) for e in index_records(listing) if e.mode == GITLINK_MODE}
    now = set(gitlinks)
    for change in raw_records(listing):
        if change.new_mode == GITLINK_MODE:
            now.add(os.fsdecode(change.path))
        elif change.old_mode == GITLINK_MODE:
            now.discard(os.fsdecode(change.path))
    return now


class NestedTrees:
    """Snapshots and restores the work trees of the nested repositories at `paths`."""

    def __init__(self, git: GitRunner, objects: Path, indexes: Path, git_dir: Path,
                 common_dir: Path) -> None:
        self._git = git  # the outer repository's runner
        self._objects = objects
        self._indexes = indexes
        self._settings = git_dir, common_dir  # whose config and excludes the views copy
        self._runners: dict[str, GitRunner] = {}
        self.left_out: dict[str, str] = {}  # path -> why its files are not in checkpoints
        self._too_big: set[str] = set()  # (counted once a session)
        self._commit: str | None = None
        self._map_tree: dict[str, str] = {}  # commit -> tree of the map
        self._written: dict[str, tuple[FileStamp | None, str]] = {}  # path -> its index, tree
        self.repairs: list[str] = []

    def views(self) -> list[RawView]:
        """The private git dirs of the nested repositories seen so far."""
        return [runner.raw for runner in self._runners.values() if runner.raw is not None]

    # -- snapshot ----------------------------------------------------------------------

    def snapshot(self, paths: set[str], plain: Sequence[str] = ()) -> str | None:
        """A commit mapping each nested repository at `paths` to its work tree now (None: none);
        `plain`: directories holding a `.git` the model made, added as ordinary directories."""
        trees = {}
        for path in sorted(paths):
            runner = self._runner(path)
            if runner is not None:
                inside = [d[len(path) + 1:] for d in plain if d.startswith(path + "/")]
                trees[path] = self._snapshot_one(path, runner, inside)
        if not trees:
            return None
        listing = "".join(f"040000 tree {tree}\t{_entry_name(path)}\0" for path, tree in trees.items())
        map_tree = self._git.run("mktree", "-z", stdin=listing.encode()).decode().strip()
        if self._commit is not None and self.map_tree(self._commit) == map_tree:
            return self._commit
        self._commit = commit_tree(self._git, self._objects, map_tree, [], _SUBJECT)
        self._map_tree[self._commit] = map_tree
        return self._commit

    def _runner(self, path: str) -> GitRunner | None:
        """The runner for the nested repository at `path`, None when it is left out."""
        work_tree = self._git.root / path
        if not os.path.lexists(work_tree / ".git"):
            if not os.path.lexists(work_tree):
                return None  # removed: the outer diff shows the gitlink go
            self.left_out.setdefault(path, f"{path} (a nested git repository whose .git is gone: "
                                           "its files are not in checkpoints)")
            return None
        if path in self._too_big:
            return None
        if path not in self._runners:
            git_dir, common_dir = self._settings
            raw = RawView(self._index(path).with_suffix(".raw-git"), work_tree, git_dir,
                          common_dir, objects=self._objects, settings_env=self._git.base_env)
            runner = GitRunner(work_tree, location={
                "GIT_DIR": str(raw.path), "GIT_COMMON_DIR": str(raw.path),
                "GIT_WORK_TREE": str(work_tree), "GIT_OBJECT_DIRECTORY": str(self._objects),
            }, raw=raw)
            raw.env()  # (made before the first command)
            files = _over(runner, self._index(path).with_suffix(".none"), MAX_TRACKED)
            if files is not None:
                self._too_big.add(path)
                self.left_out[path] = (f"{path} (a nested git repository of over "
                                       f"{MAX_TRACKED:,} files: its files are not in checkpoints)")
                return None
            self._runners[path] = runner
        return self._runners[path]

    def _index(self, path: str) -> Path:
        self._indexes.mkdir(parents=True, exist_ok=True)
        return self._indexes / (hashlib.sha1(os.fsencode(path)).hexdigest() + ".index")

    def _snapshot_one(self, path: str, runner: GitRunner, plain: Sequence[str]) -> str:
        """`git add -A` into the repository's private index (tried again while files vanish
        under it, as for the outer tree), then its tree; `plain` seeded first (`seed_entries`)."""
        index = self._index(path)
        written = self._written.get(path)
        if written is not None and file_stamp(index) != written[0]:
            # Only navtui writes it: one changed behind its back is made again from its tree.
            index.unlink(missing_ok=True)
            runner.run("read-tree", written[1], index=index)
            self.repairs.append(f"{index} (navtui's private index of {path}) was changed by "
                                "someone else since navtui wrote it: made again before use")
        if plain:
            seed_entries(runner, index, plain)
        for _ in range(_VANISHED_RETRIES):
            result = runner.run_full("add", "-A", "--ignore-errors", index=index, ok_codes=(0, 1, 128))
            if result.returncode != 128:
                tree = runner.line("write-tree", index=index)
                self._written[path] = (file_stamp(index), tree)
                return tree
        error = result.stderr.decode("utf-8", "replace").strip()
        raise WorkspaceError(f"could not snapshot the nested repository {path}: {error}")

    # -- read back ----------------------------------------------------------------------

    def map_tree(self, commit: str) -> str:
        if commit not in self._map_tree:
            self._map_tree[commit] = self._git.line("rev-parse", commit + "^{tree}")
        return self._map_tree[commit]

    def trees(self, commit: str | None) -> dict[str, str]:
        """Nested path -> work-tree tree, as checkpoint map `commit` holds them."""
        if commit is None:
            return {}
        out = self._git.run("ls-tree", "-z", self.map_tree(commit))
        return {_path_of(e.path.decode("ascii")): e.object_id for e in tree_records(out)}

    def changed_files(self, old: str | None, new: str | None) -> list[str]:
        """`PATH/file` for each file that differs inside a nested repository between two maps."""
        if old is None or new is None or old == new:
            return []
        before, after = self.trees(old), self.trees(new)
        changed = []
        for path in sorted(set(before) & set(after)):
            if before[path] != after[path]:
                out = self._git.run("diff-tree", "-r", "-z", "--name-only", "--no-renames",
                                    before[path], after[path])
                changed += [f"{path}/{os.fsdecode(name)}" for name in out.split(b"\0") if name]
        return changed

    def diff(self, old: str | None, new: str | None, limit: int) -> str:
        """The unified diff of the files inside nested repositories, `PATH/...` named."""
        if old is None or new is None or old == new:
            return ""
        before, after = self.trees(old), self.trees(new)
        parts = []
        for path in sorted(set(before) & set(after)):
            if before[path] == after[path]:
                continue
            out = self._git.run(
                "diff-tree", "-p", "-r", "--no-color", "--no-ext-diff", "--no-textconv",
                "--no-renames", f"--src-prefix=a/{path}/", f"--dst-prefix=b/{path}/",
                before[path], after[path],
            )
            parts.append(out.decode("utf-8", "replace"))
        text = "".join(parts)
        if len(text) > limit:
            text = text[:limit] + f"\n# navtui: nested repositories' diff cut at {limit} characters\n"
        return text

    # -- restore -----------------------------------------------------------------------

    def restore(self, now: str | None, target: str | None,
                check: ObjectCheck | None = None) -> tuple[list[str], list[str]]:
        """Put nested work trees back from map `now` (just snapshotted) to map `target`, with
        the objects written checked by `check` (they are in the outer repository's store).

        Returns (paths rewritten, outer-relative; `path: why` for nested repositories left as
        they are)."""
        if target is None or now == target:
            return [], []
        current, wanted = self.trees(now), self.trees(target)
        changed, left = [], []
        for path, tree in sorted(wanted.items()):
            if current.get(path) == tree:
                continue
            runner = self._runner(path) if path in current else None
            if runner is None:
                left.append(f"{path}: the nested repository is gone, so undo cannot put its "
                            "files back")
                continue
            try:
                done = apply_tree(runner, self._index(path), current[path], tree, check=check)
                self._written[path] = (file_stamp(self._index(path)), tree)
            except WorkspaceError as error:
                left.append(f"{path}: {error}")
                continue
            changed += [f"{path}/{name}" for name in done]
        self._commit = target
        return changed, left
