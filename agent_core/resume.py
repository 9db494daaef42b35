"""Continue a session from its log and its checkpoint refs (after a quit, a crash or `kill -9`).

The log (`agent_core.trajectory`) holds the issue, the config, every decided proposal with its
raw model text, every observation and every checkpoint ref; the workspace holds the checkpoints.
`load_state` rebuilds, from the log alone, the state the session had: the fold of its events
through `agent_core.session_state.SessionState.apply`, the reducer the live session uses (the
step records still standing after every undo, and the conversation the model had read, turn by
turn, exactly as the session stored it). `resume_session` then reattaches the workspace and
hands that state to a new `Session` with the same id.

Crash consistency: a step is kept when its `StepExecuted` line is in the log *and* its checkpoint
ref still exists. A step that ran but was not logged (killed between the command and the log
line) is dropped. Whatever changed in the working tree since the last kept checkpoint (the
user's edits after a quit, or a command that was running when the process died) is kept, with a
Notice listing it and saying how the session stopped; with `overwrite_changes` (`--force`) it is
saved under `refs/navtui/<id>/before-resume-<n>` and the checkpoint is put back. A proposal that
was streaming or waiting for a decision is simply asked for again.

Not restored: the wall clock already spent (`--max-time` counts from the resume).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agent_core import history, prompts
from agent_core.backends.base import Backend
from agent_core.events import (
    Event,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
)
from agent_core.executor import Executor
from agent_core.finish import FinishReason
from agent_core.profiles import logged_profile
from agent_core.session import Session, SessionConfig
from agent_core.session_state import SessionState
from agent_core.steps import StepRecord
from agent_core.trajectory import Trajectory, TrajectoryError, read_trajectory, resume_refusal
from agent_core.workspace import Workspace

@dataclass
class ResumeState:
    """Everything a new Session needs to carry on where the log stops."""

    session_id: str
    issue: str
    config: dict
    state: SessionState
    notices: list[str] = field(default_factory=list)

    @property
    def records(self) -> list[StepRecord]:
        return self.state.records

    @property
    def turns(self) -> list[tuple[int, prompts.Turn]]:
        """(step index the turn belongs to, the turn)."""
        return [(entry.step, entry.turn) for entry in self.state.entries]


def load_state(trajectory: Trajectory) -> ResumeState:
    """Rebuild records and conversation from the log (no git access): the fold of its events."""
    starts = [e for e in trajectory.events if isinstance(e, SessionStarted)]
    if not starts:
        raise TrajectoryError(
            f"{trajectory.path} has no SessionStarted line: "
            "it is not a session log navtui can resume"
        )
    config = dict(starts[-1].config)
    config["dialect"] = trajectory.dialect
    return ResumeState(
        session_id=trajectory.session_id,
        issue=trajectory.issue,
        config=config,
        state=history.fold(trajectory.events, config["dialect"]),
    )


def how_it_stopped(trajectory: Trajectory) -> str:
    """`ended (quit)`, or how a session that logged no end stopped (for the resume notice)."""
    last_start = max(
        (i for i, e in enumerate(trajectory.events) if isinstance(e, SessionStarted)), default=0
    )
    tail = trajectory.events[last_start:]
    ends = [e for e in tail if isinstance(e, SessionFinished)]
    if ends:
        return f"ended ({ends[-1].reason})"
    proposed = [e.index for e in tail if isinstance(e, StepProposed)]
    decided = [e.record.index for e in tail if isinstance(e, (StepExecuted, StepRejected))]
    if proposed and proposed[-1] > max(decided, default=0):
        return f"stopped during step {proposed[-1]} (killed or crashed, mid-step)"
    return "stopped between steps (killed or crashed)"


def reconcile(
    state: ResumeState, workspace: Workspace, *, stopped: str = "stopped",
    overwrite_changes: bool = False,
) -> ResumeState:
    """Match the log to the checkpoints in git; keep (or, with `overwrite_changes`, save and
    undo) whatever changed in the tree since the last kept checkpoint."""
    checkpoints = {c.index: c for c in workspace.attach(state.session_id)}
    kept: list[StepRecord] = []
    for record in state.records:
        if record.checkpoint is None:
            kept.append(record)
            continue
        ref = checkpoints.get(record.checkpoint.index)
        if ref is None or ref.commit != record.checkpoint.commit:
            break
        kept.append(record)
    notices = list(state.notices)
    if len(kept) < len(state.records):
        lost = [r.index for r in state.records[len(kept):]]
        notices.append(
            f"steps {lost} are logged but their checkpoints are gone; resuming before them"
        )
    last = max([r.checkpoint.index for r in kept if r.checkpoint is not None], default=0)
    workspace.drop_after(last)
    changed = workspace.foreign_changes()
    if changed:
        notices.append(_changes_notice(workspace, last, changed, stopped, overwrite_changes))
    standing = dataclasses.replace(state.state)
    if len(kept) < len(state.records):
        standing.drop_after(state.records[len(kept)].index - 1)
    return dataclasses.replace(state, state=standing, notices=notices)


def _changes_notice(
    workspace: Workspace, last: int, changed: list[str], stopped: str, overwrite: bool
) -> str:
    """Keep the changes (the default) or save them and put checkpoint `last` back."""
    what = ", ".join(changed[:20]) + (f" and {len(changed) - 20} more" if len(changed) > 20 else "")
    since = f"since the session {stopped}, after checkpoint {last}"
    if not overwrite:
        return (
            f"files changed {since}: {what}. They are kept as they are; to put checkpoint "
            f"{last} back instead (your versions saved in a ref first), resume with --force"
        )
    saved = workspace.save_state("before-resume")
    report = workspace.restore(last)
    restored = ", ".join(report.changed_paths[:10]) or "HEAD only"
    return (
        f"files changed {since}: restored checkpoint {last} ({restored}); what was there is "
        f"kept in {saved}: `git restore --source={shlex.quote(saved)} -- PATH` brings a file back"
    )


def session_config(state: ResumeState, **overrides: object) -> SessionConfig:
    """The logged SessionConfig, with `overrides` (e.g. a new `max_steps`) applied."""
    known = {f.name for f in dataclasses.fields(SessionConfig)}
    values = {k: v for k, v in state.config.items() if k in known}
    logged = values.get("prompt_profile")
    if logged is not None and logged_profile(logged) is None and not overrides.get("prompt_profile"):
        raise TrajectoryError(
            f"the session ran with the prompt profile file {logged}; a session log is never a "
            "source of files to load: if it is yours, resume with `--prompt-profile "
            f"{shlex.quote(str(logged))}`"
        )
    values.update({k: v for k, v in overrides.items() if v is not None})
    return SessionConfig(**values)


def resume_session(
    trajectory: Trajectory | Path,
    *,
    workspace: Workspace,
    executor: Executor,
    backend: Backend,
    listeners: Iterable[Callable[[Event], None]] = (),
    overwrite_changes: bool = False,
    submitted_ok: bool = False,
    **overrides: object,
) -> Session:
    """A Session that carries on the logged one; listeners see its restart notices.

    Typical use: `session = resume_session(path, workspace=..., executor=..., backend=...,
    listeners=[TrajectoryWriter(path, resumed=True), printer])` then `session.run(policy)`.
    Files changed since the session stopped are kept unless `overwrite_changes` (then they are
    saved under a `before-resume` ref and the last checkpoint is put back). `submitted_ok`: a
    session that submitted is resumed finished, to go on with `Session.continue_with`.
    """
    if isinstance(trajectory, Path):
        trajectory = read_trajectory(trajectory)
    refusal = resume_refusal(trajectory, submitted_ok=submitted_ok)
    if refusal is not None:
        raise TrajectoryError(refusal)
    state = reconcile(load_state(trajectory), workspace, stopped=how_it_stopped(trajectory),
                      overwrite_changes=overwrite_changes)
    session = Session(
        workspace=workspace,
        executor=executor,
        backend=backend,
        issue=state.issue,
        config=session_config(state, **overrides),
        session_id=state.session_id,
    )
    for listener in listeners:
        session.subscribe(listener)
    backend.skip(state.state.model_turns_used)  # a scripted backend moves past what was used
    steps = sum(1 for r in state.records if r.checkpoint is not None)
    end = trajectory.finished  # a quit session goes on; a submitted one waits for a message
    submitted = end if end is not None and end.reason == FinishReason.SUBMITTED else None
    session.restore_state(
        state.state,
        notices=[f"resumed session {state.session_id} after {steps} executed step(s)",
                 *state.notices],
        finished=submitted,
    )
    return session
