"""A model turn that survives server faults (`agent_core.backends.faults`).

* `ContextTooLong`: the fitter's limit is lowered so the prompt fits the server's window (its own
  token count scaled to navtui's where it gave one), the prompt is trimmed by the same fitter and
  the turn is sent once more; a notice says by how much.
* `StreamDropped`: the partial reply is discarded (a fresh `TurnStarted` tells front ends) and
  the turn starts over, at most `MAX_DROPS` times.
* `ServerUnavailable`, or a fault that keeps coming: the session stops with reason
  `server_unavailable` (exit 2 in `--auto`); everything done so far stays in the log for
  `--resume`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_core.backends.faults import ContextTooLong, ServerUnavailable, StreamDropped
from agent_core.context import ContextFitter, ContextOverflow, Fitted
from agent_core.events import Event, Notice, TurnStarted
from agent_core.finish import FinishReason
from agent_core.prompt_types import Prompt
from agent_core.prompts import Turn

MAX_DROPS = 2
RESUME_HINT = "; the session is kept: `navtui --resume ID` continues it"
# Share of the server's room the trimmed prompt may fill (its count and navtui's differ a little).
SERVER_ROOM = 0.95


@dataclass
class TurnOutcome:
    raw: str | None
    fitted: Fitted
    finish: tuple[FinishReason, str] | None = None  # (reason, message) when the session must stop


def generate_with_retries(
    generate: Callable[[int, Prompt], str | None],
    index: int,
    fitted: Fitted,
    fitter: ContextFitter,
    turns: Sequence[Turn],
    max_new_tokens: int,
    emit: Callable[[Event], None],
    stopped: Callable[[], bool],
) -> TurnOutcome:
    """Run `generate(index, prompt)` on the fitted prompt, retrying as the module docstring
    says; `stopped()` tells whether the user cancelled meanwhile."""
    drops = 0
    trimmed = False
    while True:
        try:
            return TurnOutcome(generate(index, fitted.prompt), fitted)
        except ServerUnavailable as fault:
            reason = FinishReason.SERVER_UNAVAILABLE
            return TurnOutcome(None, fitted, (reason, f"{fault.reason}: {fault}"))
        except StreamDropped as fault:
            drops += 1
            if drops > MAX_DROPS:
                return TurnOutcome(None, fitted, (
                    FinishReason.SERVER_UNAVAILABLE,
                    f"the connection broke {drops} times in a row: {fault}{RESUME_HINT}"))
            emit(Notice(f"{fault}; step {index} starts over (the partial reply is discarded)"))
        except ContextTooLong as fault:
            limit = None if trimmed else trimmed_limit(fault, fitted.tokens, max_new_tokens)
            if limit is None:
                return TurnOutcome(None, fitted, (FinishReason.LIMIT, f"context window full: {fault}"))
            trimmed = True
            fitter.shrink(limit)
            try:
                refitted = fitter.fit(turns)
            except ContextOverflow as overflow:
                return TurnOutcome(None, fitted, (FinishReason.LIMIT, f"context window full: {overflow}"))
            emit(Notice(_trim_notice(fault, fitted.tokens, refitted.tokens, index)))
            fitted = refitted
        if stopped():
            return TurnOutcome(None, fitted)
        emit(TurnStarted(index))


def trimmed_limit(fault: ContextTooLong, counted: int, max_new_tokens: int) -> int | None:
    """The fitter limit, in navtui's counting, that brings a `counted`-token prompt under the
    server's window with room for the reply; None when no prompt can fit."""
    if fault.limit is None:
        return int(counted * 0.75)
    room = fault.limit - max_new_tokens
    if room <= 0:
        return None
    scale = counted / fault.prompt_tokens if fault.prompt_tokens else 1.0
    return min(int(room * scale * SERVER_ROOM), int(counted * SERVER_ROOM))


def _trim_notice(fault: ContextTooLong, before: int, after: int, index: int) -> str:
    said = []
    if fault.limit is not None:
        said.append(f"its context window is {fault.limit} tokens")
    if fault.prompt_tokens is not None:
        said.append(f"it counted {fault.prompt_tokens} in the prompt")
    why = f" ({' and '.join(said)})" if said else ""
    return (f"the server refused the prompt as too long{why}: trimmed it from {before} to "
            f"{after} tokens (navtui's count) and retried step {index}")
