"""Counts for a batch's live progress line: done, running, failed, skipped, and an ETA.

Thread-safe: workers report `started` and `finished`; the front end reads `snapshot()` (also
the JSON progress event) or `line()` whenever it redraws. The ETA is the run's pace so far
(instances finished per second of wall time, all workers together) applied to what is left;
skipped instances cost nothing and do not count towards the pace.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agent_core.finish import FinishReason

FAILED = frozenset({FinishReason.ERROR, FinishReason.SERVER_UNAVAILABLE})


class BatchProgress:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0
        self._running: set[str] = set()
        self._done = self._failed = self._skipped = self._stopped = 0
        self._began = time.monotonic()

    def begin(self, total: int) -> None:
        with self._lock:
            self.total = total
            self._began = time.monotonic()

    def started(self, instance_id: str) -> None:
        with self._lock:
            self._running.add(instance_id)

    def finished(self, instance_id: str, status: str) -> None:
        with self._lock:
            self._running.discard(instance_id)
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
            elapsed = time.monotonic() - self._began
            ran = self._done + self._failed + self._stopped
            left = self.total - ran - self._skipped
            eta = elapsed / ran * left if ran else None
            return {"total": self.total, "done": self._done, "running": len(self._running),
                    "failed": self._failed, "skipped": self._skipped, "stopped": self._stopped,
                    "elapsed_s": round(elapsed, 1),
                    "eta_s": None if eta is None else round(eta, 1)}

    def line(self) -> str:
        """`7/10 done (3 in an earlier run) · 2 running · 1 failed · ETA 2m10s`"""
        s = self.snapshot()
        earlier = f" ({s['skipped']} in an earlier run)" if s["skipped"] else ""
        parts = [f"{s['done'] + s['skipped']}/{s['total']} done{earlier}",
                 f"{s['running']} running", f"{s['failed']} failed"]
        parts.append("ETA " + ("…" if s["eta_s"] is None else _duration(s["eta_s"])))
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
