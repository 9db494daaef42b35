"""Counts for a batch's live progress line: done, running, failed, skipped, and an ETA.

Thread-safe: workers report `started` and `finished`; the front end reads `snapshot()` (also
the JSON progress event) or `line()` whenever it redraws.

The ETA counts the instances in flight, not only those finished: an instance is expected to
take `D` seconds, each running one has `D` minus its age left (at least a tenth of `D`), and the
ones waiting are laid on the workers as they free up (`_schedule`); the ETA is when the last
ends, plus one standard deviation of the durations for the stragglers of the last round. `D` is
the Kaplan-Meier mean of the durations (`expected_duration`): the finished instances are the
short ones at first, so the running ones count as lasting at least their age. Skipped instances
cost nothing and count nowhere.
"""

from __future__ import annotations

import heapq
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from agent_core.finish import FinishReason

FAILED = frozenset({FinishReason.ERROR, FinishReason.SERVER_UNAVAILABLE})


class BatchProgress:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self.total = 0
        self.workers = 1
        self._running: dict[str, float] = {}  # instance id -> when it started
        self._durations: list[float] = []
        self._done = self._failed = self._skipped = self._stopped = 0
        self._began = clock()

    def begin(self, total: int, workers: int = 1) -> None:
        with self._lock:
            self.total = total
            self.workers = max(workers, 1)
            self._began = self._clock()

    def started(self, instance_id: str) -> None:
        with self._lock:
            self._running[instance_id] = self._clock()

    def finished(self, instance_id: str, status: str) -> None:
        with self._lock:
            began = self._running.pop(instance_id, None)
            if began is not None and status not in ("skipped", "stopped"):
                self._durations.append(self._clock() - began)
            if status == "skipped":
                self._skipped += 1
            elif status in FAILED:
                self._failed += 1
            elif status == "stopped":
                self._stopped += 1
            else:
                self._done += 1

    def snapshot(self) -> dict[str, Any]:
        """`{"total", "done", "running", "failed", "skipped", "stopped", "elapsed_s", "eta_s"}`;
        `eta_s` is None until one instance has finished."""
        with self._lock:
            now = self._clock()
            elapsed = now - self._began
            ran = self._done + self._failed + self._stopped
            waiting = self.total - ran - self._skipped - len(self._running)
            eta = self._eta(now, waiting)
            return {"total": self.total, "done": self._done, "running": len(self._running),
                    "failed": self._failed, "skipped": self._skipped, "stopped": self._stopped,
                    "elapsed_s": round(elapsed, 1),
                    "eta_s": None if eta is None else round(eta, 1)}

    def _eta(self, now: float, waiting: int) -> float | None:
        """See the module docstring; None until an instance has finished."""
        if not self._durations:
            return None
        ages = [now - began for began in self._running.values()]
        expected = expected_duration(self._durations, ages)
        left = [max(expected - age, expected / 10) for age in ages]
        end = _schedule(left, max(waiting, 0), expected, self.workers)
        return end + (statistics.pstdev(self._durations) if waiting + len(ages) > 1 else 0.0)

    def line(self) -> str:
        """`7/10 done (3 in an earlier run) · 2 running · 1 failed · ETA 2m10s`"""
        s = self.snapshot()
        earlier = f" ({s['skipped']} in an earlier run)" if s["skipped"] else ""
        parts = [f"{s['done'] + s['skipped']}/{s['total']} done{earlier}",
                 f"{s['running']} running", f"{s['failed']} failed"]
        parts.append("ETA " + ("…" if s["eta_s"] is None else _duration(s["eta_s"])))
        return " · ".join(parts)


def expected_duration(finished: list[float], ages: list[float]) -> float:
    """The mean duration by Kaplan-Meier: finished instances end at their duration, running ones
    are known to last at least their age; the survivors past the last observation are given half
    the finished mean more."""
    observed = sorted([(d, True) for d in finished] + [(a, False) for a in ages])
    alive, area, last = 1.0, 0.0, 0.0
    for at, (length, ended) in enumerate(observed):
        area += alive * (length - last)
        last = length
        if ended:
            alive *= 1 - 1 / (len(observed) - at)
    return area + alive * statistics.mean(finished) / 2


def _schedule(left: list[float], waiting: int, each: float, workers: int) -> float:
    """When the last instance ends: the running ones end after `left` seconds, and `waiting`
    more of `each` seconds start on the first worker free."""
    free = sorted(left)[:workers] + [0.0] * max(workers - len(left), 0)
    end = max(left, default=0.0)
    heapq.heapify(free)
    for _ in range(waiting):
        start = heapq.heappop(free)
        end = max(end, start + each)
        heapq.heappush(free, start + each)
    return end


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
