"""navtui's refs for one session: `refs/navtui/<session>/<n>` per checkpoint, and the labelled
refs undo and resume keep the overwritten state under."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent_core.git.errors import WorkspaceError
from agent_core.git.process.runner import GitRunner
from agent_core.git.objects.survival import SurvivalStore

__all__ = ["REF_ROOT", "check_session_id", "delete_refs", "session_ids", "session_refs"]

REF_ROOT = "refs/navtui"
_SESSION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def check_session_id(session_id: str) -> None:
    """Refuse an id that cannot name a git ref (or would climb out of navtui's refs)."""
    if (
        not _SESSION_ID.fullmatch(session_id)
        or ".." in session_id
        or session_id.endswith(".lock")
    ):
        raise WorkspaceError(
            f"session id {session_id!r} cannot name a git ref: use letters, digits, '.', '_', '-'"
        )


def session_ids(git: GitRunner, store: SurvivalStore) -> list[str]:
    """Ids of the sessions with a checkpoint 0 in the repository or in the store's ref log
    (refs the model deleted), oldest first."""
    out = git.run(
        "for-each-ref", "--sort=committerdate", "--format=%(refname)", f"{REF_ROOT}/"
    ).decode()
    ids: list[str] = []
    for ref in out.split():
        parts = ref.split("/")
        if len(parts) == 4 and parts[3] == "0" and parts[2] not in ids:
            ids.append(parts[2])
    for session_id in store.recorded_sessions():
        if session_id not in ids and _SESSION_ID.fullmatch(session_id) and any(
            ref.endswith("/0") for ref in store.recorded_refs(session_id)
        ):
            ids.append(session_id)
    return ids


def session_refs(git: GitRunner, session_id: str) -> list[tuple[str, str, str, str]]:
    """(ref, commit, tree, message) for each checkpoint ref of the session."""
    out = git.run(
        "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)%00%(contents)%00",
        f"{REF_ROOT}/{session_id}/",
    ).decode("utf-8", "replace")
    fields = out.split("\0")
    records = []
    for i in range(0, len(fields) - 3, 4):
        ref, commit, tree, message = (f.strip() for f in fields[i:i + 4])
        if ref.rsplit("/", 1)[1].isdigit():
            records.append((ref, commit, tree, message))
    return records


def delete_refs(git: GitRunner, refs: Iterable[str]) -> None:
    """Delete `refs` in one `update-ref --stdin` (nothing when there are none)."""
    lines = "".join(f"delete {ref}\n" for ref in refs)
    if lines:
        git.run("update-ref", "--stdin", stdin=lines.encode())
