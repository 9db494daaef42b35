"""A model turn that survives server faults (`agent_core.backends.faults`).

* `ContextTooLong`: the fitter's limit is lowered so the prompt fits the server's window (its own
  token count scaled to navtui's where it gave one), the prompt is trimmed by the same fitter and
  the turn is sent once more; a notice says by how much. A reply cut because the window is full
  (`WindowFull`) is trimmed for the same way, leaving room for a whole reply, and the model is
  told with its next observation (`TurnOutcome.told`).
* `StreamDropped` (a broken connection, a chunk that does not parse, an error event, a stall):
  the partial reply is discarded (a fresh `TurnStarted` tells front ends) and the turn starts
  over after a pause (a `Waiting` event), at most `MAX_DROPS` times.
* `ServerUnavailable`, or a fault that keeps coming: the session stops with reason
  `server_unavailable` (exit 2 in `--auto`); everything done so far stays in the log for
  `--resume`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import threading
import time
from dataclasses import dataclass

from agent_core.backends.faults import ContextTooLong, ServerUnavailable, StreamDropped, WindowFull
from agent_core.context import ContextFitter, ContextOverflow, Fitted
from agent_core.events import Event, Notice, TurnStarted, Waiting
from agent_core.finish import FinishReason
from agent_core.prompt_types import Prompt
from agent_core.prompts import Turn
from agent_core.session_config import SessionConfig

MAX_DROPS = 2
RETRY_PAUSE = 1.0  # before the first retry of a broken reply; doubled for the next
WINDOW_FULL_TOLD = (
    "Note: your previous reply was cut off because the context window was full; older steps "
    "were shortened to make room. Keep replies short: brief reasoning, then exactly one action."
)
RESUME_HINT = "; the session is kept: `navtui --resume ID` continues it"
# Share of the server's room the trimmed prompt may fill (its count and navtui's differ a little).
SERVER_ROOM = 0.95


@dataclass
class TurnOutcome:
    raw: str | None
    fitted: Fitted
    finish: tuple[FinishReason, str] | None = None  # (reason, message) when the session must stop
    told: str | None = None  # for the model, with its next observation


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
    told = None
    while True:
        try:
            return TurnOutcome(generate(index, fitted.prompt), fitted, told=told)
        except ServerUnavailable as fault:
            reason = FinishReason.SERVER_UNAVAILABLE
            return TurnOutcome(None, fitted, (reason, f"{fault.why}: {fault}"))
        except StreamDropped as fault:
            drops += 1
            if drops > MAX_DROPS:
                return TurnOutcome(None, fitted, (
                    FinishReason.SERVER_UNAVAILABLE,
                    f"the connection broke {drops} times in a row: {fault}{RESUME_HINT}"))
            emit(Notice(f"{fault}; step {index} starts over (the partial reply is discarded)"))
            if not _pause(RETRY_PAUSE * 2 ** (drops - 1), f"retrying step {index}", emit, stopped):
                return TurnOutcome(None, fitted)
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
            told = WINDOW_FULL_TOLD if isinstance(fault, WindowFull) else told
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


def _pause(seconds: float, reason: str, emit: Callable[[Event], None],
           stopped: Callable[[], bool]) -> bool:
    """Wait `seconds` (said as a `Waiting`); False when the user stopped meanwhile."""
    emit(Waiting(reason, 0.0, seconds))
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if stopped():
            return False
        time.sleep(min(0.05, max(until - time.monotonic(), 0.0)))
    return not stopped()


def _trim_notice(fault: ContextTooLong, before: int, after: int, index: int) -> str:
    if isinstance(fault, WindowFull):
        return (f"window full: {fault}; trimmed the prompt from {before} to {after} tokens "
                f"(navtui's count) to leave room for a whole reply and retried step {index}")
    said = []
    if fault.limit is not None:
        said.append(f"its context window is {fault.limit} tokens")
    if fault.prompt_tokens is not None:
        said.append(f"it counted {fault.prompt_tokens} in the prompt")
    why = f" ({' and '.join(said)})" if said else ""
    return (f"{fault.refused_by} refused the prompt as too long{why}: trimmed it from {before} "
            f"to {after} tokens (navtui's count) and retried step {index}")


def deadline_timer(max_time: float | None, started: float | None,
                   stop: Callable[[], None]) -> threading.Timer:
    """A timer that calls `stop` when the session's `--max-time` runs out (a reply that streams
    nothing, or only keep-alive comments, is bounded by it too); without a limit, one that never
    starts (its `cancel()` is still safe)."""
    if max_time is None or started is None:
        return threading.Timer(0, stop)
    timer = threading.Timer(max(started + max_time - time.monotonic(), 0.0), stop)
    timer.daemon = True
    timer.start()
    return timer


def fit_server_window(backend: object, config: SessionConfig) -> list[str]:
    """Fit prompts to the context window the backend states (`context_window` of a server that
    reports one, or of a local model: its max_position_embeddings), where it is smaller than
    the configured one; the notice that says so (`window_source` names whose window it is)."""
    window = getattr(backend, "context_window", None)
    if not (isinstance(window, int) and config.max_new_tokens < window < config.context_window):
        return []
    source = getattr(backend, "window_source", "the server's context window")
    said = (f"{source} is {window} tokens: prompts are fitted to it, not to "
            f"{config.context_window}")
    config.context_window = window
    return [said]
