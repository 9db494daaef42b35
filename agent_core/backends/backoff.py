"""How many requests a server gets at once, and how long a busy answer (HTTP 429/503) waits;
one `ServerBackoff` per server, shared by every client of it (a batch's workers).

An adaptive in-flight limit in place of a pause for everyone: a request takes a slot
(`acquire`) before it is sent and gives it back when its reply ends (`release`). No limit is
known until the server refuses one:

* refused while others are being served (a capacity signal): the limit becomes the number still
  in flight, and only the refused request waits, for its `Retry-After` (never shorter) or a
  doubling pause;
* refused while nobody is served (the server is loading, restarting, or full with other
  clients): every client pauses, and one request at a time probes until one gets through;
* a success may raise the limit by one once a request had to wait for a slot: quickly (after as
  many successes as the limit) below the level that was last refused, slowly (`PROBE_AFTER`
  successes) at it, so a server past its slots answers few 429s.

Jitter (up to a quarter of a pause, at most a second) spreads retries. Each request has its own
total deadline (`deadline` seconds from its first busy answer): past it the caller gives up with
`ServerUnavailable`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

DEFAULT_DEADLINE = 300.0
MAX_PAUSE = 60.0
PROBE_AFTER = 32  # successes at the limit before trying one more request at once


class ServerBackoff:
    """Thread-safe; see the module docstring."""

    def __init__(
        self,
        first: float = 0.5,
        cap: float = 30.0,
        deadline: float = DEFAULT_DEADLINE,
        jitter: Callable[[], float] = random.random,
        probe_after: int = PROBE_AFTER,
    ) -> None:
        self.first = first
        self.cap = cap
        self.deadline = deadline
        self.probe_after = probe_after
        self._jitter = jitter
        self._changed = threading.Condition()
        self._until = 0.0  # monotonic time before which nobody sends
        self._streak = 0  # busy answers in a row with nobody served
        self.limit: int | None = None  # requests at once; None: no limit known
        self._refused_at: int | None = None  # in flight when the last capacity 429 came
        self.in_flight = 0
        self._successes = 0  # since the limit last changed
        self._demand = False  # a request waited for a slot since the limit last changed
        self.busy_answers = 0  # every 429/503 seen, for reports and tests

    # -- slots ---------------------------------------------------------------------------------

    def acquire(self, timeout: float) -> float | None:
        """Take a slot, waiting at most `timeout` s; None once taken, else what keeps the
        request waiting: the shared pause's seconds left, or 0.0 for a full limit."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                now = time.monotonic()
                pause = self._until - now
                full = self.limit is not None and self.in_flight >= self.limit
                if pause <= 0 and not full:
                    self.in_flight += 1
                    return None
                self._demand = self._demand or full
                if now >= deadline:
                    return max(pause, 0.0)
                self._changed.wait(min(deadline - now, max(pause, 0.0) or deadline - now))

    def release(self, succeeded: bool) -> None:
        """Give the slot back; a success may raise the limit (see the module docstring)."""
        with self._changed:
            self.in_flight = max(self.in_flight - 1, 0)
            if succeeded:
                self._streak = 0
                self._grow()
            self._changed.notify_all()

    def refused(self, retry_after: float | None, attempt: int = 0) -> float:
        """A 429/503 for a request that held a slot (given back here); returns that request's
        pause. See the module docstring for the limit and the shared pause."""
        with self._changed:
            self.in_flight = max(self.in_flight - 1, 0)
            self.busy_answers += 1
            self._successes, self._demand = 0, False
            serving = self.in_flight
            if serving:
                self._refused_at = serving + 1
                self.limit = serving if self.limit is None else min(self.limit, serving)
                pause = self._pause(retry_after, attempt)
            else:
                self.limit = 1
                pause = self._pause(retry_after, self._streak)
                self._streak += 1
                self._until = max(self._until, time.monotonic() + pause)
            self._changed.notify_all()
            return pause

    def unreachable(self, attempt: int) -> float:
        """The server refused the connection (restarting): give the slot back and pause every
        client as for a busy answer with nobody served."""
        with self._changed:
            self.in_flight = max(self.in_flight - 1, 0)
            self.busy_answers += 1
            pause = self._pause(None, attempt)
            self._until = max(self._until, time.monotonic() + pause)
            self._changed.notify_all()
            return pause

    def pause_left(self) -> float:
        with self._changed:
            return max(self._until - time.monotonic(), 0.0)

    # -- inside the lock -----------------------------------------------------------------------

    def _pause(self, retry_after: float | None, attempt: int) -> float:
        if retry_after is not None:
            pause = min(max(retry_after, 0.0), MAX_PAUSE)
        else:
            pause = min(self.first * 2**attempt, self.cap)
        return pause + self._jitter() * min(0.25 * pause + 0.02, 1.0)

    def _grow(self) -> None:
        if self.limit is None:
            return
        self._successes += 1
        near = self._refused_at is not None and self.limit + 1 >= self._refused_at
        if self._demand and self._successes >= (self.probe_after if near else self.limit):
            self.limit += 1
            self._successes, self._demand = 0, False
            if self._refused_at is not None and self.limit > self._refused_at:
                self._refused_at = None
