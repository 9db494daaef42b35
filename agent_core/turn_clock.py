"""A model turn as it streams, for the live figures front ends show before the turn ends: the
tokens written so far (estimated from the characters: the real count comes with the turn's
usage) and their rate since the first token (so prefill time does not drag it down)."""

from __future__ import annotations

from agent_core.backends.token_estimate import CHARS_PER_TOKEN

# A rate over less than this many seconds of decoding says nothing yet.
MIN_RATE_SECONDS = 0.2


class TurnClock:
    """Fed with the turn's start and its streamed text, with the time of each (`now`)."""

    def __init__(self) -> None:
        self.started = 0.0
        self._first_at: float | None = None
        self._chars = 0
        self._first_chars = 0

    def start(self, now: float) -> None:
        self.started, self._first_at, self._chars, self._first_chars = now, None, 0, 0

    def feed(self, text: str, now: float) -> None:
        if self._first_at is None and text:
            self._first_at, self._first_chars = now, len(text)
        self._chars += len(text)

    @property
    def tokens(self) -> int:
        """Tokens written so far (estimated)."""
        return round(self._chars / CHARS_PER_TOKEN)

    def rate(self, now: float) -> float:
        """Tokens a second since the first one (0.0 until there is enough to tell)."""
        if self._first_at is None or now - self._first_at < MIN_RATE_SECONDS:
            return 0.0
        return (self._chars - self._first_chars) / CHARS_PER_TOKEN / (now - self._first_at)
