"""Rewind and fork a logged session without opening it (`navtui rewind`, `navtui fork`).

`rewind_session` does what the app's `w` does, through the same code: the session is resumed
from its log (with a backend that never generates), `Session.undo` puts the files back to the
step's checkpoint and the conversation forgets every later turn, and the `StepUndone` is
appended to its log. `fork_session` makes a new session that shares the history up to a step:
its log is the old log's lines up to that step's decision (the id and checkpoint refs renamed,
a `meta` line naming the parent), its refs point at the old checkpoints' commits
(`Workspace.fork`); the old session, its log and the working tree stay as they are.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.backends.base import Backend, BackendError
from agent_core.events import (
    Notice,
    SessionStarted,
    StepExecuted,
    StepRejected,
)
from agent_core.executor import Executor
from agent_core.git import REF_ROOT
from agent_core.history import standing_records
from agent_core.prompt_types import Prompt, Usage
from agent_core.resume import resume_session
from agent_core.sanitize import json_safe
from agent_core.session_config import new_session_id
from agent_core.trajectory import (
    FORKED_AT,
    FORKED_FROM,
    Trajectory,
    TrajectoryError,
    TrajectoryWriter,
    default_path,
    find_trajectory,
    read_trajectory,
    repo_state_dir,
    resume_refusal,
)
from agent_core.workspace import Workspace


class NoModel(Backend):
    """The backend of a session opened only to rewind it: it never generates."""

    name = "none"
    last_usage: Usage | None = None

    def stream(self, prompt: Prompt) -> Iterator[str]:
        raise BackendError("this session was opened to rewind it; resume it to go on")

    def cancel(self) -> None:
        """Nothing generates."""

    def count_tokens(self, prompt: Prompt) -> int:
        return 0

    def close(self) -> None:
        """Nothing to free."""


@dataclass
class Rewound:
    """What `rewind_session` did: the step it went back to, the files it rewrote, the ref
    holding what was there before, and the notices of the resume and the undo."""

    session_id: str
    to_index: int
    changed_paths: list[str]
    saved_ref: str | None
    notices: list[str]


@dataclass
class Forked:
    """What `fork_session` made: the new session, its log and its checkpoint refs."""

    parent: str
    session_id: str
    at_index: int
    path: Path
    refs: list[str]


def standing_steps(trajectory: Trajectory) -> list[int]:
    """The step indexes a session can go back to: 0 (its start) and every step still standing."""
    return [0, *(record.index for record in standing_records(trajectory.events))]


def _check_step(trajectory: Trajectory, index: int, flag: str) -> None:
    steps = standing_steps(trajectory)
    if index not in steps:
        shown = ", ".join(map(str, steps))
        raise TrajectoryError(f"{flag} {index}: session {trajectory.session_id} has no step "
                              f"{index} standing; choose one of {shown}")


def rewind_session(repo: Path, session_id: str, to_index: int, *, force: bool = False) -> Rewound:
    """Put session `session_id`'s files and conversation back to step `to_index`, as `w` does.
    Raises `UnsafeRestore` (listing them) when files changed since its last checkpoint, unless
    `force` (they are then kept in a before-undo ref); TrajectoryError for a bad id or step."""
    path = find_trajectory(repo, session_id)
    trajectory = read_trajectory(path)
    refusal = resume_refusal(trajectory, submitted_ok=True)
    if refusal is not None:
        raise TrajectoryError(refusal)
    _check_step(trajectory, to_index, "--to")
    workspace = Workspace.open(repo)
    heard: list[Any] = []
    try:
        workspace.check_free()
        session = resume_session(trajectory, workspace=workspace,
                                 executor=Executor(workspace.root), backend=NoModel(),
                                 listeners=[heard.append], submitted_ok=True)
    except BaseException:
        workspace.close()
        raise
    writer = TrajectoryWriter(path, resumed=True)
    session.subscribe(writer)
    try:
        undone = session.undo(to_index, force=force)
    finally:
        session.close()
        writer.close()
    notices = [e.message for e in heard if isinstance(e, Notice)]
    return Rewound(trajectory.session_id, undone.to_index, undone.changed_paths, undone.saved_ref,
                   notices)


def fork_session(repo: Path, session_id: str, at_index: int) -> Forked:
    """A new session sharing `session_id`'s history up to step `at_index` (see the module doc)."""
    source = find_trajectory(repo, session_id)
    trajectory = read_trajectory(source)
    if trajectory.started is None:
        raise TrajectoryError(f"{source} has no SessionStarted line: it is not a session log")
    _check_step(trajectory, at_index, "--at")
    parent, new_id = trajectory.session_id, new_session_id()
    lines = _fork_lines(source, trajectory, at_index, parent, new_id)
    kept = [r.checkpoint.index for r in standing_records(trajectory.events)
            if r.index <= at_index and r.checkpoint is not None]
    workspace = Workspace.open(repo)
    try:
        refs = workspace.fork(parent, new_id, [0, *kept])
    finally:
        workspace.close()
    path = default_path(repo_state_dir(repo), new_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8", newline="\n") as handle:
        handle.writelines(lines)
    return Forked(parent, new_id, at_index, path, refs)


def _cut(trajectory: Trajectory, at_index: int) -> int:
    """How many of the log's events the fork keeps: up to the decision on step `at_index` (the
    last one: an undo may have made it again), or, for 0, up to the start and its notices."""
    events = trajectory.events
    if at_index == 0:
        start = next(i for i, e in enumerate(events) if isinstance(e, SessionStarted))
        end = start + 1
        while end < len(events) and isinstance(events[end], Notice):
            end += 1
        return end
    return 1 + max(i for i, e in enumerate(events) if isinstance(e, (StepExecuted, StepRejected))
                   and e.record.index == at_index)


def _fork_lines(source: Path, trajectory: Trajectory, at_index: int, parent: str,
                new_id: str) -> list[str]:
    """The fork's log: the old log's event and meta lines up to the cut, renamed for `new_id`,
    then a meta line naming the parent (no writer line: no process writes it yet)."""
    wanted = _cut(trajectory, at_index)
    lines, events = [], 0
    text = source.read_text(encoding="utf-8", errors="surrogateescape")
    for line in text.removesuffix("\n").split("\n"):
        if events >= wanted:
            break
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            break  # (a torn last line: read_trajectory skipped it too)
        kind = data.get("type")
        if kind == "writer":
            continue
        if kind != "meta":
            events += 1
            _rename(data, parent, new_id)
        lines.append(json_safe(json.dumps(data, ensure_ascii=False)) + "\n")
    meta = {"type": "meta", FORKED_FROM: parent, FORKED_AT: at_index, "t": time.time()}
    return [*lines, json.dumps(meta) + "\n"]


def _rename(data: dict[str, Any], parent: str, new_id: str) -> None:
    """One logged event, made the fork's: its session id and its checkpoint ref."""
    if data.get("type") == SessionStarted.__name__:
        data["session_id"] = new_id
    checkpoint = (data.get("record") or {}).get("checkpoint")
    old = f"{REF_ROOT}/{parent}/"
    if isinstance(checkpoint, dict) and str(checkpoint.get("ref", "")).startswith(old):
        checkpoint["ref"] = f"{REF_ROOT}/{new_id}/" + checkpoint["ref"][len(old):]
