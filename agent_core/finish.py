"""How a session finished: the closed set of reasons, each with its exit code and outcome."""

from __future__ import annotations

from enum import StrEnum


class FinishReason(StrEnum):
    """Why a session finished (`SessionFinished.reason`, the log's `reason`, the batch status)."""

    SUBMITTED = "submitted"  # the model submitted its fix
    LIMIT = "limit"  # --max-steps, --max-time or the context window
    STUCK = "stuck"  # --max-stuck turns in which the model repeated itself
    SCRIPT_EXHAUSTED = "script_exhausted"  # a replay script ran out of turns
    FORMAT_ERRORS = "format_errors"  # --max-format-errors unreadable replies in a row
    SERVER_UNAVAILABLE = "server_unavailable"  # a server fault outlasted its retries (resumable)
    QUIT = "quit"  # the user quit
    ERROR = "error"  # something failed that the user must fix

    @property
    def exit_code(self) -> int:
        """The process's exit status when a session ends this way (`navtui`, `--auto`)."""
        return _OUTCOMES[self][0]

    @property
    def has_prediction(self) -> bool:
        """The session ran to an end of its own: its patch is a prediction (batch runs keep it
        and do not run the instance again)."""
        return _OUTCOMES[self][1]

    @property
    def tone(self) -> str:
        """success | warning | error: how a front end colours the ending."""
        return _OUTCOMES[self][2]


# reason: (exit code, has a prediction, tone)
_OUTCOMES: dict[FinishReason, tuple[int, bool, str]] = {
    FinishReason.SUBMITTED: (0, True, "success"),
    FinishReason.LIMIT: (2, True, "warning"),
    FinishReason.STUCK: (2, True, "warning"),
    FinishReason.SCRIPT_EXHAUSTED: (2, True, "warning"),
    FinishReason.FORMAT_ERRORS: (2, True, "warning"),
    FinishReason.SERVER_UNAVAILABLE: (2, False, "warning"),
    FinishReason.QUIT: (3, False, "warning"),
    FinishReason.ERROR: (1, False, "error"),
}
