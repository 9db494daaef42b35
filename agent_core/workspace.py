"""The git side of a session: snapshot the user's repo, checkpoint every step, diff, undo.

Every snapshot is a commit under `refs/navtui/<session>/<n>` built through a private index
(`GIT_INDEX_FILE`, `git add -A`, `write-tree`, then the commit: git/objects/commits.py), so the user's
branch, index, stash and working tree are never touched by checkpointing; git/checkpoints/snapshot.py keeps
that index between checkpoints and adds only what changed. A checkpoint commit's `Snapshot`
says what it holds.
Private-index commands run through `RawView`, so no attribute converts what is snapshotted.

Checkpoint commits have HEAD as first parent (so commits the model made and then reset away stay
reachable) and the previous checkpoint as second; checkpoint 0 instead has a commit of the
user's staged state as second parent, so undo can put the user's index back. A step that
changed neither the tree nor HEAD reuses the previous checkpoint's commit under its own ref.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.git import (
    REF_ROOT, ControlFiles, ControlGuard, DiffCaps, GitRunner, HeadState, HeadWatcher, IgnoredCaps,
    IgnoredStore, MadeGitEntries, NestedTrees, Quarantine, RawView, SessionForks, Snapshot,
    SnapshotEngine, SurvivalStore, TreeDiffs, UnsafeRestore, WorkspaceError, acquire, apply_tree, check_free,
    check_session_id, checkpoint_message as _message, clear_operation_state, clear_user_marks,
    commit_tree, copy_index, copy_user_index, delete_refs, find_repo, gitlinks_after, keep_step,
    move_head, parse_message as _parse_message, ref_intact, release, restore_modes, restore_user_index,
    save_modes, session_ids, session_refs, staged_commit, write_ref,
)
from agent_core.steps import Checkpoint

__all__ = ["DiffCaps", "IgnoredCaps", "RestoreReport", "UnsafeRestore", "Workspace", "WorkspaceError"]

_EMBEDDED = "warning: adding embedded git repository: "


@dataclass
class RestoreReport:
    """What an undo changed: working-tree paths rewritten or removed, whether HEAD moved, and
    the branches and tags (as at the session's start) it put back after they were deleted."""

    changed_paths: list[str]
    head_moved: bool
    restored_refs: list[str] = field(default_factory=list)


class Workspace(SessionForks):
    """One user repository, seen through navtui's checkpoints. Create with `Workspace.open`."""

    def __init__(self, root: Path, git_dir: Path, common_dir: Path) -> None:
        self.root = root
        self.git_dir = git_dir
        self.state_dir = git_dir / "navtui"
        self.session_id: str | None = None
        self._raw = RawView(self.state_dir / "raw-git", root, git_dir, common_dir)
        # Where the repository's parts are, given: a `.git/commondir` or `core.worktree` the
        # model plants never redirects navtui's own git calls (or where they write objects).
        self._git = GitRunner(root, raw=self._raw, location={
            "GIT_DIR": str(git_dir), "GIT_COMMON_DIR": str(common_dir),
            "GIT_OBJECT_DIRECTORY": str(common_dir / "objects"), "GIT_WORK_TREE": str(root),
        })
        self._common_dir = common_dir
        self._heads = HeadWatcher(self._git, git_dir, common_dir)
        self._control = ControlFiles(self._git, root, git_dir, common_dir)
        # checkpoint commit -> the git files as its step left them, when some were quarantined
        self._planted: dict[str, str] = {}
        quarantine = self.state_dir / "quarantine"
        try:
            quarantine_shown = quarantine.relative_to(root).as_posix()
        except ValueError:
            quarantine_shown = str(quarantine)
        self._guard = ControlGuard(self._control, Quarantine(
            quarantine, common_dir, self._control.shown_prefix, quarantine_shown))
        self._objects = common_dir / "objects"
        # Made again for each session (its private indexes live under the session's name).
        self._nested = NestedTrees(self._git, self._objects, self.state_dir, git_dir, common_dir)
        self._gitlinks: set[str] = set()  # paths of submodules / nested repositories now
        self._checkpoints: list[Checkpoint] = []
        self._store = SurvivalStore(self._git, self.state_dir / "store", self._objects,
                                    self._raw.path)
        self._tips: dict[str, str] = {}  # branches and tags at the session's start
        self._saved_refs: dict[str, str] = {}  # before-undo refs -> their commits
        self._repairs: list[str] = []  # navtui's own state found tampered with and rebuilt
        self._snapshots: dict[str, Snapshot] = {}  # checkpoint commit -> what it holds
        self._staged: str | None = None
        self._engine = SnapshotEngine(self._git, root, self._control, self._repairs)
        self.ignored_caps = IgnoredCaps()
        self.diff_caps = DiffCaps()
        self._diffs = TreeDiffs(self._git)
        # Made again for each session (its private index lives under the session's name).
        self._ignored_store = IgnoredStore(self._git, root, self.state_dir / "ignored.index")
        # The `.git` entries the model made in the working tree (`made`; `fresh`: by the last
        # step; `news()`: one line each, for the user).
        self.made_git = MadeGitEntries(self._git, root, quarantine)
        self._outside: dict[str, str] = {}  # path -> why it is outside the checkpoints
        self._outside_told: set[str] = set()

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Workspace:
        """Open the repository containing `path`; refuses what navtui cannot safely work in."""
        return cls(*find_repo(Path(path).expanduser().absolute()))

    # -- sessions ---------------------------------------------------------------------------

    @property
    def checkpoints(self) -> list[Checkpoint]:
        return list(self._checkpoints)

    @property
    def watching(self) -> bool:
        """Whether a checkpoint after a step that changed nothing may skip `git status`: the
        tree watch (agent_core/git/tree_watch.py) is on."""
        return self._engine.watching

    @property
    def watch_tree(self) -> bool:
        """Whether a checkpoint may start the tree watch (on unless set off before `begin`)."""
        return self._engine.watch_tree

    @watch_tree.setter
    def watch_tree(self, on: bool) -> None:
        self._engine.watch_tree = on

    @property
    def snapshot_warnings(self) -> list[str]:
        """What git said while adding the working tree to the last snapshot, one line each."""
        return self._engine.warnings

    def sessions(self) -> list[str]:
        """Ids of the sessions with checkpoints in this repository, oldest first."""
        return session_ids(self._git, self._store)

    def begin(self, session_id: str) -> Checkpoint:
        """Start a session: checkpoint 0 is the user's state, uncommitted and untracked included."""
        check_session_id(session_id)
        if session_refs(self._git, session_id):
            raise WorkspaceError(
                f"session {session_id!r} already has checkpoints in {self.root}: resume it, "
                "or delete it first"
            )
        self._use_session(session_id)
        index = self._index_path()
        index.parent.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        user_index = self._user_index()
        if user_index.exists():
            copy_user_index(self._git, user_index, index)
            # The user's index as it is, conflict entries and flags included, for undo to 0.
            copy_index(index, self._saved_user_index())
            clear_user_marks(self._git, index, self._common_dir)
        else:
            index.unlink(missing_ok=True)
        head = self._heads.read()
        self._staged = staged_commit(self._git, index, head)
        if self._staged or head.commit:
            self._raw.point_head(self._staged or head.commit or "")
        self.made_git.begin()
        tree, ignored = self._snapshot_all()
        listing = self._git.run("ls-files", "-z", "-s", index=index)
        self._gitlinks = gitlinks_after(self._gitlinks, listing, staged=True)
        save_modes(self.root, listing, self._modes_path())
        first = self._record(0, tree, head, ignored)
        self._raw.env()
        self._tips = self._store.current_tips()
        self._store.save_tips(session_id, self._tips)
        self._keep(self._store.keep_start)
        return first

    def checkpoint(self, index: int, *, trusted: bool = False) -> Checkpoint:
        """Snapshot the working tree after step `index` (greater than the last checkpoint's).

        Git's control files the step changed are named (`git_warnings`); those that plant code
        are moved to quarantine first, unless the change is `trusted` (the user's own edits).
        """
        last = self._last()
        if index <= last.index:
            raise WorkspaceError(
                f"checkpoint {index} would not follow checkpoint {last.index}: steps only move forward"
            )
        self._ensure_kept()
        # Most steps (reads, searches, `ls`) change nothing: point the new ref at the previous
        # commit while the tree is snapshotted (creating a file costs as much as a small git
        # call on some file systems), and move it only if the step did change it (the engine
        # skips this where the tree watch says what changed).
        ref = f"{REF_ROOT}/{self.session_id}/{index}"
        guessed: list[str] = []

        def guess() -> None:
            self._set_ref(ref, last.commit)
            guessed.append(last.commit)

        # A `.git` made where the tree watch looks leaves an event; the ignored walk meets others.
        quiet = self._engine.quiet()
        self.made_git.check(self._ignored_store.over_cap, look=not quiet)
        tree, ignored = self._snapshot_all(meanwhile=guess, trust_watch=True)
        if quiet and self._ignored_store.git_entries_moved:
            self.made_git.check(self._ignored_store.over_cap, again=True)
        self.made_git.unstage(self._user_index())
        previous = self._snapshots[last.commit].tree
        if tree != previous:
            raw = self._diffs.step(previous, tree, self.diff_caps)  # and the step diff
            self._gitlinks = gitlinks_after(self._gitlinks, raw)
            self._guard.tree_hooks([os.fsdecode(p) for p in raw.split(b"\0")[1::2]])
        return self._record(index, tree, self._heads.read(), ignored,
                            ref_at=guessed[0] if guessed else None, trusted=trusted)

    def attach(self, session_id: str) -> list[Checkpoint]:
        """Reload an existing session's checkpoints from its refs (for resume)."""
        check_session_id(session_id)
        records = session_refs(self._git, session_id)
        recorded = self._store.recorded_refs(session_id)
        numbered = {ref: c for ref, c in recorded.items() if ref.rsplit("/", 1)[1].isdigit()}
        if numbered and {r[0]: r[1] for r in records} != numbered:
            # The model deleted or moved the session's refs: they come back from the store.
            last = max((r for r in recorded if r.rsplit("/", 1)[1].isdigit()),
                       key=lambda r: int(r.rsplit("/", 1)[1]), default=None)
            if last is not None:
                self._raw.env()
                self._store.heal(recorded, recorded[last], self._store.tips(session_id))
                records = session_refs(self._git, session_id)
        if not records:
            raise WorkspaceError(
                f"no session {session_id!r} in {self.root}; known: {', '.join(self.sessions()) or 'none'}"
            )
        self._use_session(session_id)
        self._take_lock()
        for ref, commit, tree, message in sorted(records, key=lambda r: int(r[0].rsplit("/", 1)[1])):
            fields = _parse_message(message)
            index = int(ref.rsplit("/", 1)[1])
            if index == 0:
                self._staged = fields.get("staged")
            self._snapshots[commit] = Snapshot(
                tree, HeadState(fields.get("head"), fields.get("branch")), fields.get("ignored"),
                fields.get("control"), fields.get("nested"), fields.get("made"),
            )
            if fields.get("quarantined"):
                self._planted[commit] = fields["quarantined"] or ""
            self._checkpoints.append(
                Checkpoint(index, ref, commit, fields.get("head"), fields.get("branch"))
            )
        self._index_path().parent.mkdir(parents=True, exist_ok=True)
        self._engine.adopt(self._index_path())
        if not self._index_path().exists() and self._user_index().exists():
            copy_user_index(self._git, self._user_index(), self._index_path())
            clear_user_marks(self._git, self._index_path(), self._common_dir)
        self._engine.forget_stamp()
        self._tips = self._store.tips(session_id)
        self._heal()
        self._raw.point_head(self._checkpoints[-1].commit)
        newest = self._snapshots[self._checkpoints[-1].commit]
        self._guard.told = newest.control
        self._control.adopt(self._guard.told)
        self._gitlinks = set(self._nested.trees(newest.nested))
        self.made_git.begin(held=self.made_git.named(newest.made))
        return self.checkpoints

    def check_free(self) -> None:
        """Raise `SessionLocked` (naming it) if another live navtui session holds this repo."""
        check_free(self.state_dir, self.root)

    def close(self) -> None:
        """Give up the repository's session lock (if this process holds it) and the tree watch."""
        self._engine.stop_watching()
        self._git.close()
        release(self.state_dir)

    def delete_session(self, session_id: str) -> None:
        """Remove a session's refs and private index (its commits become garbage for `git gc`)."""
        check_session_id(session_id)
        refs = self._git.run(
            "for-each-ref", "--format=%(refname)", f"{REF_ROOT}/{session_id}/"
        ).decode().split()
        delete_refs(self._git, refs)
        for suffix in (".index", ".ignored.index", ".control.index", ".user-index", ".modes.json"):
            (self.state_dir / "checkpoints" / f"{session_id}{suffix}").unlink(missing_ok=True)
        shutil.rmtree(self.state_dir / "checkpoints" / f"{session_id}.nested", ignore_errors=True)
        self._store.forget(session_id, last=not [s for s in self.sessions() if s != session_id])
        if session_id == self.session_id:
            self.session_id = None
            self._checkpoints = []

    # -- diffs ------------------------------------------------------------------------------

    def diff(self, a: int, b: int | None = None) -> str:
        """Unified diff from checkpoint `a` to checkpoint `b` (None: the working tree now)."""
        return self._diff(self._tree(a), self._tree_or_now(b))

    def step_diff(self, index: int) -> str:
        """What step `index` changed: the checkpoint before it -> checkpoint `index`."""
        position = self._position(index)
        if position == 0:
            return ""
        previous, current = self._checkpoints[position - 1], self._checkpoints[position]
        before, after = self._snapshots[previous.commit], self._snapshots[current.commit]
        diff = self._diff(before.tree, after.tree)
        diff += self._nested.diff(before.nested, after.nested, self.diff_caps.total_bytes)
        old, new = before.control, after.control
        if current.commit != previous.commit:  # a reused commit: the step changed nothing
            new = self._planted.get(current.commit) or new
        if old and new:
            diff += self._control.diff(old, new, self.diff_caps.total_bytes)
        return diff

    def session_diff(self) -> str:
        """Everything the session changed: checkpoint 0 -> the working tree now."""
        return self.diff(self._first().index)

    def changed_files(self, a: int, b: int | None = None) -> list[str]:
        """Paths that differ between checkpoint `a` and `b` (None: now); renames list both ends."""
        return self._diffs.changed_files(self._tree(a), self._tree_or_now(b))

    def patch(self, exclude: Sequence[str] = ()) -> str:
        """The session's changes as a patch for `git apply` on a checkout of checkpoint 0,
        without the paths in `exclude`.

        Binary files are included (`--binary`); bytes that are not UTF-8 are kept as surrogate
        escapes, so write it with `errors="surrogateescape"` to get the exact patch back.
        """
        self._ensure_kept()
        return self._diffs.patch(self._snapshots[self._first().commit].tree, self._snapshot(),
                                 exclude)

    def bounded_patch(self, exclude: Sequence[str] = ()) -> tuple[str, bool]:
        """`patch(exclude)` within `diff_caps` (for logs and events), and whether it is complete."""
        self._ensure_kept()
        return self._diffs.bounded(self._snapshots[self._first().commit].tree, self._snapshot(),
                                   self.diff_caps, binary=True, exclude=exclude)

    # -- undo -------------------------------------------------------------------------------

    def restore(self, index: int) -> RestoreReport:
        """Make the working tree (and HEAD/branch) exactly checkpoint `index`; later ones are dropped."""
        position = self._position(index)
        target = self._checkpoints[position]
        self._ensure_kept()
        now, wanted = self._snapshot(), self._snapshots[target.commit].tree
        changed: list[str] = []
        if now != wanted:
            self._engine.catch_up(self._index_path())
            changed = apply_tree(self._git, self._index_path(), now, wanted, check=self._store.check)
            self._engine.wrote(self._index_path(), wanted)
        # (ignored files no checkpoint holds, over the cap or made since by someone else, stay)
        changed += self._ignored_store.restore(self._snapshots[self._checkpoints[-1].commit].ignored,
                                               self._snapshots[target.commit].ignored, self._store.check)
        restore_modes(self.root, changed, self._modes_path())
        changed += self._restore_git_parts(self._snapshots[target.commit])
        head = HeadState(target.head, target.branch)
        head_moved = move_head(self._git, self.git_dir, head, f"navtui: undo to step {index}")
        self._heads.forget()
        clear_operation_state(self.git_dir)
        first = self._checkpoints[0]
        restore_user_index(
            self._git, self._user_index(), self._saved_user_index(),
            start=HeadState(first.head, first.branch), staged=self._staged, head=head,
            head_moved=head_moved,
        )
        self._drop_after_position(position)
        return RestoreReport(sorted(changed), head_moved, self._store.restore_tips(self._tips))

    def foreign_changes(self) -> list[str]:
        """What changed since the last checkpoint: paths (git's own files as `.git/...`), then
        `HEAD (...)` if HEAD moved.

        The session checkpoints after every step, so these are changes it did not make (the
        user's edits while the model thought, a session that stopped mid-step, ...).
        """
        last = self._last()
        self._ensure_kept()
        paths = self.changed_files(last.index)
        held = self._snapshots[last.commit]
        paths += self._nested.changed_files(held.nested, self._snapshot_nested())
        control = self._control.changed_since(held.control, self._control_index())
        paths += [f"{self._control.shown_prefix}{change.path}" for change in control]
        head = self._heads.read()
        if head != HeadState(last.head, last.branch):
            where = head.branch or "detached"
            paths.append(f"HEAD (now {where} at {(head.commit or 'no commit')[:10]})")
        return paths

    def save_state(self, label: str) -> str:
        """Keep the working tree and HEAD as they are now under `refs/navtui/<id>/<label>-<n>`.

        Undo/resume call this before rewriting anything, so nothing they overwrite is lost;
        returns the ref (`git restore --source=<ref> -- PATH` brings a file back).
        """
        last = self._last()
        self._ensure_kept()
        (tree, ignored), head = self._snapshot_all(), self._heads.read()
        control = self._control.current(self._control_index())
        nested, made = self._snapshot_nested(), self.made_git.capture()
        if Snapshot(tree, head, ignored, control, nested, made) == self._snapshots[last.commit]:
            commit = last.commit
        else:
            commit = commit_tree(self._git, self._objects, tree,
                                 (head.commit, last.commit, ignored, control, nested, made),
                                 _message(head, None, ignored, control, nested, made=made))
        prefix = f"{REF_ROOT}/{self.session_id}/{label}-"
        taken = self._git.run("for-each-ref", "--format=%(refname)", prefix + "*").decode().split()
        ref = f"{prefix}{len(taken) + 1}"
        self._git.run("update-ref", ref, commit, "0" * 40)
        self._store.note_refs(self.session_id or "", {ref: commit})
        if commit != last.commit:
            self._keep(lambda: self._store.keep(commit, last.commit))
        self._saved_refs[ref] = commit
        return ref

    def drop_after(self, index: int) -> None:
        """Forget checkpoints after `index` without touching files (unlogged ones on resume)."""
        position = self._position(index)
        self._drop_after_position(position)
        self._guard.told = self._snapshots[self._checkpoints[-1].commit].control

    def dirty_since(self, index: int) -> bool:
        """True if the working tree or HEAD/branch no longer match checkpoint `index`."""
        target = self._checkpoints[self._position(index)]
        self._ensure_kept()
        if self._snapshot() != self._snapshots[target.commit].tree:
            return True
        return self._heads.read() != HeadState(target.head, target.branch)

    def repo_control_changes(self) -> list[str]:
        """Git's config, hooks, attributes and excludes files that changed up to the last
        checkpoint since the last call (one line each; a config's new settings named).

        navtui's own git calls never run them; the user's own git commands would. Checkpoints
        keep them: the step diff shows them and undo puts them back.
        """
        return self._guard.changes_to_tell(self._snapshots[self._last().commit].control)

    def git_warnings(self) -> list[str]:
        """What the user should hear about git's files since the last call, one line each:
        control files a step changed and what each does on their next git command, files moved
        to quarantine (where, and how to put them back), navtui's private git dirs rebuilt."""
        lines = self._repairs + self._ignored_store.repairs + self._nested.repairs
        self._repairs.clear()  # shared with the snapshot engine
        self._ignored_store.repairs, self._nested.repairs = [], []
        for view in [self._raw, *self._nested.views()]:
            lines += view.repairs
            view.repairs = []
        return lines + self._guard.warnings()

    def quarantined(self) -> list[str]:
        """Every file this session moved to quarantine (one line each, as `git_warnings` said)."""
        return list(self._guard.quarantine.taken)

    def control_changed_since_start(self) -> str | None:
        """What the session left changed in git's own files (checkpoint 0 -> the last one) and
        how to get the originals back by hand, or None when nothing is."""
        return self._guard.changed_since_start(
            self._snapshots[self._first().commit].control,
            self._snapshots[self._last().commit].control,
        )

    # -- internals --------------------------------------------------------------------------

    def _take_lock(self) -> None:
        """One session per repository; then a private-index lock left by a killed navtui
        (only the lock holder writes the private index) is stale and removed."""
        assert self.session_id is not None
        acquire(self.state_dir, self.session_id, self.root)
        self._index_path().with_name(self._index_path().name + ".lock").unlink(missing_ok=True)

    def _use_session(self, session_id: str) -> None:
        check_session_id(session_id)
        self.session_id = session_id
        self._nested = NestedTrees(
            self._git, self._objects, self.state_dir / "checkpoints" / f"{session_id}.nested",
            self.git_dir, self._common_dir,
        )
        self._ignored_store = IgnoredStore(
            self._git, self.root, self.state_dir / "checkpoints" / f"{session_id}.ignored.index"
        )
        self._checkpoints = []
        self._staged = None
        self._engine.forget_stamp()

    def _index_path(self) -> Path:
        return self.state_dir / "checkpoints" / f"{self.session_id}.index"

    def _snapshot_nested(self) -> str | None:
        """The nested repositories' work trees now (None when there are none)."""
        nested = self._nested.snapshot(self._gitlinks, self.made_git.work_trees())
        for path in sorted(self._gitlinks):
            self._outside.setdefault(path, self._nested.left_out.get(path) or (
                f"{path} (a submodule or nested git repository: its files are checkpointed, "
                "its own HEAD, branches and index are not)"
            ))
        return nested

    def _control_index(self) -> Path:
        return self.state_dir / "checkpoints" / f"{self.session_id}.control.index"

    def _restore_git_parts(self, target: Snapshot) -> list[str]:
        """Put back what `target` holds beside the tree: the files inside nested repositories,
        git's config, hooks, attributes and excludes, the `.git`s the model made (a part a
        checkpoint made before navtui kept it stays); what is left as it is, is named."""
        changed: list[str] = []
        left: list[str] = []
        if target.nested is not None:
            done, kept = self._nested.restore(self._snapshot_nested(), target.nested, self._store.check)
            changed, left = changed + done, left + kept
        if target.control is not None:
            done, kept = self._control.restore(self._control.current(self._control_index()),
                                               target.control)
            changed, left = changed + done, left + [f"{line} (git's own file)" for line in kept]
            self._guard.told = target.control
        done, kept = self.made_git.restore(self.made_git.capture(), target.made)
        for line in left + kept:
            self._outside.setdefault(line, f"{line} (left as it is by undo)")
        return changed + done

    def _drop_after_position(self, position: int) -> None:
        """Delete the refs of the checkpoints after `position` and forget them."""
        dropped = self._checkpoints[position + 1:]
        if dropped:
            delete_refs(self._git, (c.ref for c in dropped))
            self._store.note_refs(self.session_id or "", {c.ref: None for c in dropped})
        self._checkpoints = self._checkpoints[: position + 1]

    def _set_ref(self, ref: str, commit: str) -> None:
        """Point `ref` (one of navtui's own) at `commit` (`refs.write_ref`), noted in the store's
        ref log too."""
        self._store.note_refs(self.session_id or "", {ref: commit})
        write_ref(self._git, self._common_dir, ref, commit)

    def _modes_path(self) -> Path:
        return self.state_dir / "checkpoints" / f"{self.session_id}.modes.json"

    def _saved_user_index(self) -> Path:
        return self.state_dir / "checkpoints" / f"{self.session_id}.user-index"

    def _user_index(self) -> Path:
        return self.git_dir / "index"

    def _snapshot(self) -> str:
        """Tree id of the working tree now (tracked + untracked, minus ignored files); no
        `git status` where the tree watch saw nothing change since the last checkpoint."""
        return self._take_snapshot(list_ignored=False, trust_watch=True)[0]

    def _take_snapshot(
        self, list_ignored: bool, meanwhile: Callable[[], None] | None = None,
        trust_watch: bool = False,
    ) -> tuple[str, bytes]:
        """`SnapshotEngine.take` on this session's private index."""
        if self.session_id is None:
            raise WorkspaceError("no session: call begin() or attach() first")
        return self._engine.take(
            self._index_path(), ignored_ready=self._ignored_store.has_snapshot,
            has_gitlinks=bool(self._gitlinks), list_ignored=list_ignored, meanwhile=meanwhile,
            trust_watch=trust_watch, plain=self.made_git.work_trees(not_in=self._gitlinks),
        )

    # -- ignored files and what stays outside ------------------------------------------------

    def outside_checkpoints(self) -> list[str]:
        """What checkpoints do not hold, each named once: ignored files over the size cap,
        submodules and nested repositories, paths git could not read."""
        for line in self.snapshot_warnings:
            if not line.startswith(_EMBEDDED):  # a nested repository, named on its own
                self._outside.setdefault(line, line)
        new = [why for path, why in self._outside.items() if path not in self._outside_told]
        self._outside_told.update(self._outside)
        return new

    def _snapshot_all(
        self, meanwhile: Callable[[], None] | None = None, trust_watch: bool = False,
    ) -> tuple[str, str | None]:
        """(tree, ignored-files commit) of the working tree now (`meanwhile` runs while git
        reads the tree; `trust_watch`: see `_take_snapshot`)."""
        tree, listing = self._take_snapshot(
            list_ignored=True, meanwhile=meanwhile, trust_watch=trust_watch
        )
        # The ignored files under the caps; those over them are named as outside.
        commit = self._ignored_store.snapshot(listing, self.ignored_caps)
        for path, why in self._ignored_store.left_out.items():
            self._outside.setdefault(path, f"{why}: ignored and over the size cap")
        return tree, commit

    def _record(
        self, index: int, tree: str, head: HeadState, ignored: str | None,
        ref_at: str | None = None, trusted: bool = False,
    ) -> Checkpoint:
        """Commit (or reuse) the checkpoint and point its ref at it (unless it is at `ref_at`)."""
        previous = self._checkpoints[-1] if self._checkpoints else None
        control = self._control.current(self._control_index())
        planted = None
        if previous is not None:
            control, planted = self._guard.after_step(
                f"{self.session_id}-{index}", self._snapshots[previous.commit].control, control,
                self._control_index(), trusted,
            )
        for name in self._control.shown_left_out():
            self._outside.setdefault(name, f"{name} (git's own file, over 1 MB or unreadable)")
        nested, made = self._snapshot_nested(), self.made_git.capture()
        for path, why in self.made_git.left_out.items():
            self._outside.setdefault(path, why)
        snapshot = Snapshot(tree, head, ignored, control, nested, made)
        if previous is not None and self._snapshots[previous.commit] == snapshot and planted is None:
            commit = previous.commit
        else:
            parents = [
                head.commit, previous.commit if previous else self._staged, ignored, control, nested,
                planted, made,
            ]
            staged = self._staged if index == 0 else None
            commit = commit_tree(self._git, self._objects, tree, parents,
                                 _message(head, staged, ignored, control, nested, planted, made))
            if planted:
                self._planted[commit] = planted
            if previous is not None:
                before = self._snapshots[previous.commit]
                self._keep(lambda: keep_step(self._store, commit, previous.commit, before, snapshot,
                                             self._diffs.last_step(before.tree, tree), planted))
            if tree == self._engine.index_tree:
                self._raw.point_head(commit)
        self._snapshots[commit] = snapshot
        if self._guard.told is None:
            self._guard.told = control
        ref = f"{REF_ROOT}/{self.session_id}/{index}"
        if commit != ref_at:
            self._set_ref(ref, commit)
        checkpoint = Checkpoint(index, ref, commit, head.commit, head.branch)
        self._checkpoints.append(checkpoint)
        return checkpoint

    # -- surviving the model's git commands (agent_core/git/survival.py) ---------------------

    def _ensure_kept(self) -> None:
        """Before navtui uses its checkpoints: if the last one's ref is not as navtui wrote it
        (deleted, packed by a gc, rewritten), bring back what is missing and write the refs."""
        last = self._last()
        if not ref_intact(self._common_dir, last.ref, last.commit):
            self._heal()

    def _keep(self, keep: Callable[[], None]) -> None:
        """Copy into the store (`keep`); when that fails (a full disk, ...) the checkpoint
        still stands in the repository, and the user is told what it no longer survives."""
        try:
            keep()
        except (OSError, WorkspaceError) as error:
            self._repairs.append(
                f"navtui's object store ({self._store.path}) could not keep this checkpoint "
                f"({error}): it is in the repository, but deleting navtui's refs and a "
                "`git gc --prune=now` would now lose it"
            )

    def _heal(self) -> None:
        if self._checkpoints:
            self._raw.env()  # the store is read through navtui's checked private git dir
            refs = {c.ref: c.commit for c in self._checkpoints} | self._saved_refs
            self._store.heal(refs, self._checkpoints[-1].commit, self._tips)

    def _first(self) -> Checkpoint:
        if not self._checkpoints:
            raise WorkspaceError("no checkpoints yet: call begin() or attach() first")
        return self._checkpoints[0]

    def _last(self) -> Checkpoint:
        self._first()
        return self._checkpoints[-1]

    def _position(self, index: int) -> int:
        for position, checkpoint in enumerate(self._checkpoints):
            if checkpoint.index == index:
                return position
        known = ", ".join(str(c.index) for c in self._checkpoints) or "none"
        raise WorkspaceError(f"no checkpoint {index} in this session (have: {known})")

    def _tree(self, index: int) -> str:
        return self._snapshots[self._checkpoints[self._position(index)].commit].tree

    def _tree_or_now(self, index: int | None) -> str:
        return self._snapshot() if index is None else self._tree(index)

    def _diff(self, old: str, new: str) -> str:
        return self._diffs.bounded(old, new, self.diff_caps)[0]
