"""Data that crosses layers: a proposed step, an observation, a decision, a step record."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from agent_core.actions import Action


@dataclass
class ProposedStep:
    """What the model proposed in one turn, parsed into the shared action vocabulary."""

    thought: str
    action: Action
    raw: str
    dialect: str
    # Set when the turn held more than one action: only the first is proposed, and the model is
    # told the rest were dropped (see `agent_core.formats`).
    notice: str | None = None


@dataclass
class Observation:
    """The result of executing an action, as the model will read it."""

    output: str
    exit_code: int | None = None
    truncated: bool = False
    error: str | None = None
    # When `truncated`: how many characters the whole output had (a clipping note reports it).
    total_chars: int | None = None


# Who made a decision (`Approve.decided_by`, `Reject.decided_by`): a person, a rule, auto mode.
USER, RULE, AUTO = "user", "rule", "auto"


@dataclass
class Approve:
    """Run the proposed action as it is. `decided_by`: USER, RULE or AUTO ("" in logs written
    before navtui kept it: unknown)."""

    decided_by: str = USER


@dataclass
class Reject:
    """Do not run it; `feedback` (may be empty) is shown to the model next turn."""

    feedback: str = ""
    decided_by: str = USER


@dataclass
class EditAction:
    """Run `action` instead of the proposed one (the user's edit, already parsed)."""

    action: Action


class Verdict(StrEnum):
    """What became of one hunk of a proposed edit."""

    KEPT = "kept"
    DROPPED = "dropped"
    EDITED = "edited"  # kept as the user changed it


@dataclass
class HunkOutcome:
    """One hunk of a proposed edit and the user's word on it (`text`: the user's version)."""

    number: int
    verdict: Verdict
    header: str  # `@@ -10,2 +10,3 @@`
    where: str  # `lines 10-11`, in the file as it was
    old: str
    new: str  # as the model proposed it
    text: str | None = None


@dataclass
class KeepHunks(EditAction):
    """Run only the kept hunks of the proposed edit: `action` is the proposal rebuilt from them
    (`agent_core.hunks.kept_action`); `hunks` says what became of each. The model's turn stays
    its own; its observation ends with a note of the review (`agent_core.hunks.hunk_note`)."""

    hunks: list[HunkOutcome] = field(default_factory=list)


@dataclass
class Quit:
    """Stop the session now; everything executed so far stays checkpointed and resumable."""


Decision = Approve | Reject | EditAction | KeepHunks | Quit


@dataclass
class Checkpoint:
    """A snapshot of the working tree after step `index` (0 = the user's state before step 1)."""

    index: int
    ref: str
    commit: str
    head: str | None
    branch: str | None


# `StepRecord.extra` key of what the step did to git's own files (one line each: the file, what
# it would do on the user's next git command, or where it went in quarantine).
GIT_WARNINGS_KEY = "git_warnings"


class Origin(StrEnum):
    """Who made a step."""

    MODEL = "model"  # the model's proposal, decided by the user or a policy
    USER = "user"  # a command the user ran, or a checkpoint of the user's own edits


class StepStatus(StrEnum):
    """What became of a step."""

    EXECUTED = "executed"
    REJECTED = "rejected"
    REVIEWED = "reviewed"  # a submit that got the review message instead of ending the session
    USER_EDITS = "user_edits"  # a checkpoint of the user's own edits


@dataclass
class StepRecord:
    """One executed (or rejected) step, as the session and its log hold it."""

    index: int
    proposed: ProposedStep
    decision: Decision
    action: Action | None = None
    observation: Observation | None = None
    checkpoint: Checkpoint | None = None
    diff: str = ""
    extra: dict = field(default_factory=dict)
    origin: Origin = Origin.MODEL
    # Set on a checkpoint of the user's own edits (made while a proposal waited): the paths that
    # changed. Such a record has no action, observation or conversation turn.
    user_edits: list[str] | None = None
    # Set on a submit answered with a review message instead of ending the session: its stage, from 0.
    review_stage: int | None = None

    @property
    def status(self) -> StepStatus:
        if self.user_edits is not None:
            return StepStatus.USER_EDITS
        if self.observation is None:
            return StepStatus.REJECTED
        return StepStatus.REVIEWED if self.review_stage is not None else StepStatus.EXECUTED


def decision_counts(records: Iterable[StepRecord]) -> dict[str, int]:
    """How many of the model's proposals the user approved, rejected and edited."""
    counts = {"approved": 0, "rejected": 0, "edited": 0}
    for record in records:
        if record.origin is Origin.USER:
            continue
        if isinstance(record.decision, Reject):
            counts["rejected"] += 1
        elif isinstance(record.decision, EditAction):
            counts["edited"] += 1
        elif record.observation is not None:
            counts["approved"] += 1
    return counts
