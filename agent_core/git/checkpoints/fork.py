"""A session's checkpoints shared with a new session (`navtui fork`): the new session's refs
point at the same commits, so it starts where the old one was at a step, and the old one
stays exactly as it was (its refs, its log, the working tree are not touched)."""

from __future__ import annotations

from pathlib import Path

from agent_core.git.errors import WorkspaceError
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.safe_files import MAX_INDEX_BYTES, copy_regular
from agent_core.git.checkpoints.session_refs import REF_ROOT, check_session_id, session_refs
from agent_core.git.objects.survival import SurvivalStore

# The files beside a session's refs that a fork needs: the user's index when the session
# started (undo to 0 puts it back) and the file modes of the first snapshot.
_SHARED_FILES = (".user-index", ".modes.json")


class SessionForks:
    """The part of `Workspace` that forks a session (a mixin: it uses the workspace's git and
    its store of navtui's refs)."""

    _git: GitRunner
    _store: SurvivalStore
    state_dir: Path

    def fork(self, source_id: str, new_id: str, checkpoints: list[int]) -> list[str]:
        """Give `new_id` the checkpoints `checkpoints` of `source_id` (the same commits under its
        own refs), with the branch tips and the user's index saved at its start; the refs made."""
        check_session_id(new_id)
        if session_refs(self._git, new_id):
            raise WorkspaceError(f"session {new_id!r} already has checkpoints; choose another id")
        have = {ref: commit for ref, commit, _, _ in session_refs(self._git, source_id)}
        made: dict[str, str | None] = {}
        for index in checkpoints:
            commit = have.get(f"{REF_ROOT}/{source_id}/{index}")
            if commit is None:
                raise WorkspaceError(f"checkpoint {index} of session {source_id} is gone from "
                                     f"{REF_ROOT}/{source_id}/; it cannot be forked there")
            made[f"{REF_ROOT}/{new_id}/{index}"] = commit
        self._git.run("update-ref", "--stdin", stdin="".join(
            f"create {ref} {commit}\n" for ref, commit in made.items()).encode())
        self._store.note_refs(new_id, made)
        self._store.save_tips(new_id, self._store.tips(source_id))
        folder = self.state_dir / "checkpoints"
        for suffix in _SHARED_FILES:
            try:  # (a link or FIFO in its place is not navtui's: never followed, never copied)
                copy_regular(folder / f"{source_id}{suffix}", folder / f"{new_id}{suffix}",
                             MAX_INDEX_BYTES, 0o644)
            except OSError:
                continue
        return list(made)
