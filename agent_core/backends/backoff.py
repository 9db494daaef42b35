"""Backoff for a busy server (HTTP 429/503), shareable by every client of that server.

One `ServerBackoff` per server: when any client sees a 429 or 503 it calls `busy()`, and every
client then waits in `wait()` before its next request until the pause is over, so a batch of
workers slows down together instead of hammering a server that already said it is full. A
`Retry-After` header sets the pause (never shorter); without one the pause doubles per busy
answer in a row from `first` up to `cap`. Jitter (up to a quarter of the pause, at most a
second) spreads the workers' retries. A success ends the streak.

Each request has its own total deadline (`deadline` seconds from its first busy answer): past
it the caller gives up with `ServerUnavailable`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

DEFAULT_DEADLINE = 300.0
MAX_PAUSE = 60.0


class ServerBackoff:
    """Thread-safe shared pause; see the module docstring."""

    def __init__(
        self,
        first: float = 0.5,
        cap: float = 30.0,
        deadline: float = DEFAULT_DEADLINE,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.first = first
        self.cap = cap
        self.deadline = deadline
        self._jitter = jitter
        self._lock = threading.Lock()
        self._until = 0.0  # monotonic time before which nobody sends
        self._streak = 0
        self.busy_answers = 0  # every 429/503 seen, for reports and tests

    def busy(self, retry_after: float | None) -> float:
        """Record a busy answer; returns the pause (seconds from now) every client now waits."""
        with self._lock:
            self.busy_answers += 1
            if retry_after is not None:
                pause = min(max(retry_after, 0.0), MAX_PAUSE)
            else:
                pause = min(self.first * 2**self._streak, self.cap)
            self._streak += 1
            pause += self._jitter() * min(0.25 * pause + 0.02, 1.0)
            self._until = max(self._until, time.monotonic() + pause)
            return pause

    def succeeded(self) -> None:
        with self._lock:
            self._streak = 0

    def pause_left(self) -> float:
        with self._lock:
            return max(self._until - time.monotonic(), 0.0)

    def wait(self, cancelled: threading.Event, give_up_at: float | None = None) -> bool:
        """Sleep out the shared pause; False when `cancelled` was set meanwhile. A pause that
        would pass `give_up_at` (monotonic) is slept only up to it."""
        while True:
            left = self.pause_left()
            if give_up_at is not None:
                left = min(left, max(give_up_at - time.monotonic(), 0.0))
            if left <= 0:
                return not cancelled.is_set()
            if cancelled.wait(min(left, 0.5)):
                return False
