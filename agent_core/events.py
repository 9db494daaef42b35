"""Typed events a Session emits. Front ends (TUI, headless, --json) and the trajectory log subscribe.

Events are plain dataclasses; `event_to_dict` gives the JSON form used by `--json` and the log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_core.finish import FinishReason
from agent_core.prompt_types import Usage
from agent_core.steps import ProposedStep, StepRecord


@dataclass
class SessionStarted:
    session_id: str
    issue: str
    config: dict[str, Any]


@dataclass
class TurnStarted:
    """The model starts generating the proposal for step `index`."""

    index: int


@dataclass
class TokenStreamed:
    """A chunk of model text as it arrives (thinking and tool-call text alike)."""

    index: int
    text: str


@dataclass
class FormatError:
    """The turn could not be parsed; `message` says why, `observation` is the exact text the
    model reads next turn ("" in logs written before it was stored)."""

    index: int
    raw: str
    message: str
    consecutive: int
    observation: str = ""


@dataclass
class StepProposed:
    """A parsed proposal waiting for a decision.

    `command_shown` is exactly what will run (after path-alias rewrites); `preview_diff` is the
    diff an edit would make, computed before approval (None for actions that change no file
    predictably, e.g. bash).
    """

    index: int
    step: ProposedStep
    command_shown: str
    preview_diff: str | None = None


@dataclass
class StepExecuted:
    record: StepRecord


@dataclass
class StepRejected:
    record: StepRecord


@dataclass
class StepUndone:
    """The tree and conversation went back to checkpoint `to_index`.

    `saved_ref` keeps the state from before the undo (`git restore --source=<ref> -- PATH`).
    """

    to_index: int
    changed_paths: list[str] = field(default_factory=list)
    saved_ref: str = ""


@dataclass
class UsageReported:
    """What turn `index` cost. `context_estimated`: `context_tokens` is an estimate (a backend
    without the model's tokenizer); `usage.estimated` says the same of the usage counts."""

    index: int
    usage: Usage
    context_tokens: int
    context_limit: int
    context_estimated: bool = False


@dataclass
class PromptSent:
    """What the model read for turn `index`, enough to rebuild the prompt byte for byte from the
    log (`agent_core.prompt_log`): it was built in `dialect` with `profile` from the first
    `turns` turns of the conversation, of which the oldest `elided` were replaced by a note and
    those in `cap_chars` (position -> max_chars) cut to head and tail. `sha256` is of `digest_of`
    (`rendered`: the text the model read; `request`: the JSON body sent to a server;
    `messages`: the messages, when the backend shows neither); `tokens` its size when known.
    `identity` (model, adapter, tokenizer, template, generation settings) is given with the
    first prompt a process sends and whenever it changes; None means "as before".
    `prompt_sha256` is of the prompt navtui built (its text, or its messages and tools), what
    a server then received whatever the request around it (None in older logs)."""

    index: int
    dialect: str
    profile: str
    profile_sha256: str
    turns: int
    elided: int
    cap_chars: dict[str, int]
    path_alias: str
    max_new_tokens: int
    sha256: str
    digest_of: str
    tokens: int | None = None
    identity: dict[str, Any] | None = None
    prompt_sha256: str | None = None


@dataclass
class Notice:
    """Something the user should know that is not an error (e.g. restored after a crash)."""

    message: str


@dataclass
class Waiting:
    """The session is waiting on something outside it: `reason` (a busy server, one loading or
    restarting, a reply that has not come, a retry's pause, a free slot), `waited_s` so far and
    `next_try_s` until the next attempt (None: until the server sends something)."""

    reason: str
    waited_s: float
    next_try_s: float | None = None

    def describe(self) -> str:
        """`server busy (HTTP 429) · waited 12 s · next try in 3 s`"""
        said = [self.reason, f"waited {self.waited_s:.0f} s"]
        if self.next_try_s is not None:
            said.append(f"next try in {self.next_try_s:.0f} s")
        return " · ".join(said)


@dataclass
class UserMessage:
    """The user wrote to the model between turns; it reads `text` with its next prompt.

    `observation`: the exact text the session added for it (set by the session; "" otherwise).
    """

    text: str
    observation: str = ""


@dataclass
class SessionFinished:
    """`reason`: why (`agent_core.finish.FinishReason`, with its exit code).

    `patch` is bounded (huge and binary files named with size and blob id); when that left
    something out, `patch_complete` is False and `Workspace.patch()` gives all of it.
    """

    reason: FinishReason
    message: str
    patch: str = ""
    patch_complete: bool = True


@dataclass
class SessionError:
    message: str


Event = (
    SessionStarted
    | TurnStarted
    | TokenStreamed
    | FormatError
    | StepProposed
    | StepExecuted
    | StepRejected
    | StepUndone
    | UsageReported
    | PromptSent
    | Notice
    | Waiting
    | UserMessage
    | SessionFinished
    | SessionError
)
