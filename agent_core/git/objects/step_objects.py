"""Which objects a checkpoint commit adds to what its previous checkpoint reaches, where a
step's diff can tell (the survival store then copies just those)."""

from __future__ import annotations

from agent_core.git.objects.raw_patch import RawPatch
from agent_core.git.checkpoints.snapshot import Snapshot
from agent_core.git.objects.survival import SurvivalStore
from agent_core.git.objects.records import GITLINK_MODE, raw_records


def new_objects(commit: str, before: Snapshot, after: Snapshot, step: RawPatch | None,
                planted: str | None) -> list[str] | None:
    """The commit, its tree, the trees and blobs `step` (the diff of `before.tree` ->
    `after.tree`) names on its new side: all that `commit` reaches and the previous checkpoint
    (with snapshot `before`) does not, when its other parents are the previous one's (HEAD,
    ignored files, git's files, nested trees, made `.git`s; nothing planted). None where that
    is not so."""
    parents = (after.head.commit, after.ignored, after.control, after.nested, after.made)
    if step is None or planted is not None or parents != (
        before.head.commit, before.ignored, before.control, before.nested, before.made
    ):
        return None
    blobs = [change.new_id for change in raw_records(step.raw)
             if change.new_mode != GITLINK_MODE and not change.removed]
    return [commit, after.tree, *step.new_trees, *blobs]


def keep_step(store: SurvivalStore, commit: str, previous: str, before: Snapshot,
              after: Snapshot, step: RawPatch | None, planted: str | None) -> None:
    """Keep checkpoint `commit` in `store`: copies of the loose objects it adds where
    `new_objects` can tell them, else a pack of what it reaches beyond `previous`."""
    added = new_objects(commit, before, after, step, planted)
    if added is None or not store.keep_loose(added):
        store.keep(commit, previous)
