"""What a checkpoint holds (`Snapshot`), and the engine that turns the working tree into a tree id.

The engine keeps navtui's private index between checkpoints, with git's untracked cache: one
`git status` (stat calls only, where nothing changed) tells which paths to add. On Linux a tree
watch (tree_watch.py) says when nothing changed at all, and such a step then runs no git.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_core.git.checkpoints.adds import add_changed, covering_directories, named_paths, seed_entries
from agent_core.git.checkpoints.big_files import notice as big_file_notice
from agent_core.git.checkpoints.big_files import BigFiles, record_placeholders
from agent_core.git.control_files.control import ControlFiles
from agent_core.git.errors import WorkspaceError
from agent_core.git.checkpoints.head import HeadState
from agent_core.git.checkpoints.index_stamp import IndexStamp, index_bytes, index_stamp
from agent_core.git.process.runner import GitRunner
from agent_core.git.objects.tree_patch import TreePatcher
from agent_core.git.checkpoints.tree_watch import TreeWatch

__all__ = ["Snapshot", "SnapshotEngine", "run_meanwhile"]

# What changed in the working tree against the private index (and which directories git had to
# read again: it then rewrites the index's untracked cache). Submodules: only their commit.
_STATUS_ARGS = (
    "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames",
    "--ignore-submodules=dirty",
)
# git's threads that stat tracked files in parallel cost more than they save on a small index
# (bench/checkpoint.py: 0.26 ms of CPU at 1,000 files; at 10,000 they win).
_SMALL_INDEX_BYTES = 300_000
_NO_PRELOAD = ("-c", "core.preloadIndex=false")
# A private index this big (~3,000 files) is kept split: an edit step's `add` and `write-tree`
# then write a few KB instead of the whole index (at 10,000 files 0.9 MB each, ~7 ms a step).
SPLIT_INDEX_BYTES = 300_000
# Repository settings under which a tree made in Python could differ from git's (see `_patcher`).
_GIT_DECIDES = ("core.ignorecase", "core.precomposeunicode", "core.sharedrepository")
_FALSE = ("false", "no", "off", "0", "")


@dataclass(frozen=True)
class Snapshot:
    """What one checkpoint commit holds: the working tree's tree id, HEAD, and the commits of
    the ignored files, git's control files, the nested repositories' trees and the `.git`
    entries the model made (None: none)."""

    tree: str
    head: HeadState
    ignored: str | None = None
    control: str | None = None
    nested: str | None = None
    made: str | None = None  # the `.git` entries the model made (made_git.py)


def run_meanwhile(meanwhile: Callable[[], None] | None) -> None:
    """Run what a snapshot does beside git; a failure is the caller's to notice."""
    try:
        if meanwhile is not None:
            meanwhile()
    except (OSError, WorkspaceError):
        pass


class SnapshotEngine:
    """The working tree as a tree id, through a private index only navtui writes.

    `repairs` is where a rebuilt private index is reported (shared with the caller).
    """

    def __init__(self, git: GitRunner, root: Path, control: ControlFiles,
                 repairs: list[str]) -> None:
        self._git = git
        self._root = root
        self._control = control
        self._repairs = repairs
        self.index_tree: str | None = None  # the tree the private index held when last written
        self._index_stamp: IndexStamp | None = None
        self.warnings: list[str] = []  # what the last `git add` said
        self._ignored_listing: bytes | None = None  # the last `ls-files -o -i` output
        self._ignored_stale = True  # a directory changed since that listing
        # Lets a checkpoint of a step that changed nothing skip `git status` (tree_watch.py).
        self.watch_tree = True
        self._watch: TreeWatch | None = None
        self._watch_tried = False
        # A tree made in Python (tree_patch.py) ahead of a private index: (that index, the
        # tree, the paths it changed that the index has not seen; the next `add` adds them).
        self._ahead: tuple[Path, str, set[str]] | None = None
        self._tree_patcher: tuple[tuple[str, ...], TreePatcher] | None = None
        self._big = BigFiles(root)

    @property
    def watching(self) -> bool:
        return self._watch is not None

    def quiet(self) -> bool:
        """Whether the tree watch vouches that no directory it watches changed since git last
        looked (ignored ones it does not watch)."""
        return self._watch is not None and self._watch.quiet()

    def adopt(self, index: Path) -> None:
        """At resume: a private index left split stays split; one git cannot read (its shared
        part expired: git deletes those unused for two weeks) is deleted, to be made again."""
        if self._git.raw is None or not index.exists():
            return
        # (git names the shared part only with the setting on; for a whole index, id 0)
        found = self._git.run_full("-c", "core.splitIndex=true", "rev-parse",
                                   "--shared-index-path", index=index, ok_codes=(0, 128))
        if found.returncode:
            index.unlink()
        elif found.stdout.strip().rpartition(b".")[2].strip(b"0"):
            self._git.split_indexes.add(index)

    def forget_stamp(self) -> None:
        """The private index is not known to be as navtui last wrote it (a new or resumed session)."""
        self._index_stamp = None

    def wrote(self, index: Path, tree: str) -> None:
        """navtui itself just made the private index `index` hold `tree`."""
        self.index_tree, self._index_stamp = tree, self._stamp(index)
        self._ahead = None

    def catch_up(self, index: Path) -> None:
        """Make the private index hold the last snapshot's tree, where one made in Python went
        ahead of it (before the index is read as that tree: an undo)."""
        if self._ahead is None or self._ahead[0] != index:
            return
        _, tree, paths = self._ahead
        add_changed(self._git, index, sorted(paths), self._preload())
        self._ahead = None
        self.index_tree, self._index_stamp = tree, self._stamp(index)

    def _stamp(self, index: Path) -> IndexStamp | None:
        raw = self._git.raw
        split = raw is not None and index in self._git.split_indexes
        return index_stamp(index, raw.path if split and raw is not None else None)

    def _split_when_large(self, index: Path) -> None:
        """Keep `index` split from now on once it is large (only through the raw view). A
        session that changes no file never splits it (its start pays no shared index)."""
        stamp = self._index_stamp
        if (stamp is None or self._git.raw is None or index in self._git.split_indexes
                or index_bytes(stamp) < SPLIT_INDEX_BYTES):
            return
        self._git.split_indexes.add(index)
        self._index_stamp = self._stamp(index)

    def take(
        self, index: Path, *, ignored_ready: bool, has_gitlinks: bool, list_ignored: bool,
        meanwhile: Callable[[], None] | None = None, trust_watch: bool = False,
        plain: Sequence[str] = (),
    ) -> tuple[str, bytes]:
        """(tree of the working tree now, the ignored-files listing when `list_ignored`).

        `git status` on the private index says which paths changed; only those are added. It
        rewrites the index when it had to read a directory again (an entry was created,
        removed or renamed there; sometimes for other reasons, e.g. a file changed in the
        same clock tick as the index): only then can the set of ignored files have changed,
        so only then are they listed again (beside the `add`, which reads the same tree).
        With `trust_watch`, status is skipped when the tree watch saw nothing happen, and when
        it knows every entry that changed (their directories are added whole instead;
        `meanwhile` is then not run).
        `meanwhile` runs while git looks. `ignored_ready`: the ignored files' store has a
        snapshot; `has_gitlinks`: there are submodules or nested repositories (no tree watch).
        `plain`: directories holding a `.git` the model made, added as ordinary directories
        (`seed_entries`), never as gitlinks.
        """
        if plain:
            self._seed(index, plain)
            trust_watch = False
        before = self._stamp(index)
        if self._index_stamp is not None and before != self._index_stamp and self.index_tree:
            before = self._rebuild_index(index, self.index_tree)
        known = self.index_tree if before is not None and before == self._index_stamp else None
        rules_changed = list_ignored and self._control.touched()  # info/exclude, excludesFile
        watched = self._watch if trust_watch and not rules_changed else None
        described: list[str] | None = None  # entries made or removed, as the watch saw them
        paths: list[str] = []  # what the watch saw change, where it could tell
        if watched is not None and watched.quiet():
            run_meanwhile(meanwhile)
            changed: list[tuple[str, str]] | None = []
            looked = False
        elif watched is not None and (seen := watched.changed_paths()) is not None:
            paths = seen
            # What changed lies in the directories the events named: no `git status` (and
            # no `meanwhile`, which bets on a step that changed nothing).
            changed, looked = [("W", path) for path in covering_directories(paths)], True
            described = watched.entry_paths()
        else:
            changed, looked = self._worktree_changes(index, meanwhile), True
            if changed is not None and plain:
                # Added whole: a status under load was seen to answer for a directory just
                # seeded from its untracked cache, as if it held nothing new.
                changed += [("?", directory) for directory in plain]
        after = self._stamp(index)
        entries_changed = self._watch.entries_changed if trust_watch and self._watch else None
        if described is not None:
            entries_changed = False  # whether they touch the ignored set is known after `add`
        if entries_changed is None:
            # Which paths changed says little; that git rewrote the index says a directory had
            # to be read again.
            entries_changed = after != before or any(kind != "M" for kind, _ in changed or [])
        if entries_changed or changed is None:
            self._ignored_stale = True  # entries of some directory changed
        if not ignored_ready or self._ignored_listing is None:
            self._ignored_stale = True
        if rules_changed or (self._watch is not None and self._watch.rules_changed):
            self._ignored_stale = True
        if self._ahead is not None and self._ahead[0] != index:
            self._ahead = None  # (another session's index)
        if known is not None and described is not None and not (
            list_ignored and self._ignored_stale
        ) and (patched := self._patch(index, known, paths, described)) is not None:
            self.warnings = []
            if list_ignored:
                self._keep_watching(rules_changed, has_gitlinks)
            return patched, (self._ignored_listing or b"") if list_ignored else b""
        if changed == [] and known is not None and self._ahead is not None:
            self.warnings = []
            return self._ahead[1], (self._ignored_listing or b"") if list_ignored else b""
        if changed and self._ahead is not None:
            changed += [("M", path) for path in sorted(self._ahead[2])]
        elif changed == [] and self._ahead is not None:  # (the index is not trusted)
            changed = [("M", path) for path in sorted(self._ahead[2])]
        lister = self._list_ignored(index) if list_ignored and self._ignored_stale else None
        try:
            if changed != []:
                self._split_when_large(index)  # (by this `add`, which writes the index anyway)
                listed = None if changed is None else [path for _, path in changed]
                too_big = self._big.found(paths if described is not None else listed)
                result = add_changed(self._git, index, listed, self._preload(),
                                     verbose=described is not None, skip=sorted(too_big))
                record_placeholders(self._git, index, too_big)
                self._ahead = None
                self.warnings = [
                    line for line in result.stderr.decode("utf-8", "replace").splitlines()
                    if line.strip()
                ] + [big_file_notice(path, size) for path, size in sorted(too_big.items())]
                # Files written again as they were (`sed -i` that matched nothing, a formatter
                # that changed nothing): `add` names no entry, so the tree is the last one.
                same_tree = described is not None and not result.stdout.strip() and not too_big
                if self._stamp(index) != after and not same_tree:
                    known = None
                if described and lister is None and self._ignored_touched(described,
                                                                          result.stdout):
                    self._ignored_stale = True
                    if list_ignored:  # (beside `write-tree`)
                        lister = self._list_ignored(index)
            else:
                self.warnings = []
            if known is None:
                known = self._git.line("write-tree", index=index)
            self.index_tree, self._index_stamp = known, self._stamp(index)
        finally:
            if lister is not None:
                self._ignored_listing = self._git.collect(lister)
                self._ignored_stale = False
        if list_ignored and looked:
            self._keep_watching(rules_changed, has_gitlinks)
        return known, (self._ignored_listing or b"") if list_ignored else b""

    def _seed(self, index: Path, directories: Sequence[str]) -> None:
        """`seed_entries` into the private index; navtui wrote it, so its stamp is taken."""
        seed_entries(self._git, index, directories)
        self.index_tree, self._index_stamp = None, self._stamp(index)

    def _patch(self, index: Path, known: str, paths: list[str], entries: list[str]) -> str | None:
        """The tree now, made in Python from the last snapshot's (`known`, the private index's,
        or the one ahead of it) and the `paths` the tree watch named (`entries`: those made or
        removed); None when git has to make it."""
        base = self._ahead[1] if self._ahead is not None else known
        patcher = self._patcher()
        if patcher is None:
            return None
        made = set(entries)

        def temporary(path: str) -> bool:
            """Made and gone within the step, and no ignored file the last listing named (read
            only here: most edit steps never ask)."""
            if path not in made:
                return False
            listed = (self._ignored_listing or b"").split(b"\0")
            raw = os.fsencode(path)
            return raw not in listed and raw + b"/" not in listed

        tree = patcher.patch(base, paths, temporary)
        if tree is not None and tree != base:
            self._ahead = index, tree, (self._ahead[2] if self._ahead else set()) | set(paths)
        return tree

    def _patcher(self) -> TreePatcher | None:
        """A `TreePatcher` for the repository's settings now; None where git must decide: no
        raw view, an object format git does not know, or a setting of `_GIT_DECIDES` on."""
        raw, objects = self._git.raw, self._git.object_directory
        if raw is None or objects is None or raw.object_format is None:
            return None
        args = raw.args(self._git.base_env)
        if self._tree_patcher is None or self._tree_patcher[0] != args:
            settings = dict(pair.partition("=")[::2] for pair in args[1::2])
            for key in _GIT_DECIDES:
                if settings.get(key, "false").lower() not in _FALSE:
                    return None
            filemode = settings.get("core.filemode", "true").lower() not in _FALSE
            self._tree_patcher = args, TreePatcher(
                self._root, objects, raw.object_format,
                lambda tree: self._git.run("cat-file", "tree", tree), filemode)
        return self._tree_patcher[1]

    def stop_watching(self) -> None:
        self._watch_tried = True
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()

    def _rebuild_index(self, index: Path, tree: str) -> IndexStamp | None:
        """The private index changed since navtui last wrote it (only navtui writes it): it is
        untrusted (an entry marked assume-unchanged, forged stat data or blob ids, garbage), so
        it is made again from `tree`, the last snapshot's; its new stamp."""
        index.unlink(missing_ok=True)
        self._git.run("read-tree", tree, index=index)
        self._index_stamp = self._stamp(index)
        self._repairs.append(
            f"{index} (navtui's private index) was changed by someone else since navtui wrote "
            "it: made again from the last checkpoint before use"
        )
        return self._index_stamp

    def _keep_watching(self, rules_changed: bool, has_gitlinks: bool) -> None:
        """After a `git status` and a fresh ignored listing: start the tree watch (once a
        session), or tell it git looked, which lays its watches again where directories or
        ignore rules changed."""
        if has_gitlinks:
            self.stop_watching()  # a commit inside one changes only its .git
            return
        ignored = {
            os.fsdecode(entry) for entry in (self._ignored_listing or b"").split(b"\0")
            if entry.endswith(b"/")
        }
        if self._watch is None:
            if not self._watch_tried and self.watch_tree:
                self._watch_tried = True
                self._watch = TreeWatch.start(self._root, ignored)
        elif not self._watch.synced(ignored, rules_changed):
            self.stop_watching()

    def _list_ignored(self, index: Path) -> subprocess.Popen[bytes]:
        return self._git.spawn(
            "ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory", index=index
        )

    def _ignored_touched(self, entries: list[str], added: bytes) -> bool:
        """Whether the ignored set may differ from the last listing, after entries `entries`
        were made or removed and `git add --verbose` said `added`: not where each one is
        named there (it is tracked, or gone and was not ignored), or is gone and was not
        listed as ignored (a temporary file)."""
        listed = set((self._ignored_listing or b"").split(b"\0"))
        named = named_paths(added)
        for entry in entries:
            raw = os.fsencode(entry)
            if raw in named:
                continue
            if raw in listed or raw + b"/" in listed or os.path.lexists(self._root / entry):
                return True
        return False

    def _preload(self) -> tuple[str, ...]:
        """git's settings for a command that stats the private index's files."""
        stamp = self._index_stamp
        return _NO_PRELOAD if stamp is not None and index_bytes(stamp) < _SMALL_INDEX_BYTES else ()

    def _worktree_changes(
        self, index: Path, meanwhile: Callable[[], None] | None = None,
    ) -> list[tuple[str, str]] | None:
        """(kind, path) for each path whose working-tree state differs from the private index,
        from one `git status`: kind M (modified), D (deleted), T (type changed), U (unmerged) or
        ? (untracked); None when git could not tell."""
        if index.with_name(index.name + ".lock").exists():
            self._ignored_stale = True  # status cannot record what it read again
        status = self._git.spawn(*self._preload(), *_STATUS_ARGS, *self._big.pathspecs(),
                                 index=index, env={"GIT_OPTIONAL_LOCKS": "1"})
        try:
            run_meanwhile(meanwhile)
        finally:
            out = self._git.collect(status, ok_codes=(0, 128))
        if status.returncode:
            return None
        changes = []
        for entry in out.split(b"\0"):
            kind = entry[:2]
            if kind == b"1 ":
                if entry[3:4] != b".":
                    changes.append((entry[3:4].decode(), entry.split(b" ", 8)[8]))
            elif kind == b"u ":
                changes.append(("U", entry.split(b" ", 10)[10]))
            elif kind == b"? ":
                changes.append(("?", entry[2:]))
        return [(kind, os.fsdecode(path)) for kind, path in changes] + [
            ("M", path) for path in self._big.changed()]
