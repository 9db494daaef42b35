"""The busy-server backoff shared by a batch's backends: Retry-After honoured (never shorter),
doubling without it, jitter bounded, a success ends the streak, cancel and deadline end a wait."""

from __future__ import annotations

import threading
import time

from agent_core.backends.backoff import MAX_PAUSE, ServerBackoff


def test_retry_after_is_never_shortened_and_jitter_is_bounded() -> None:
    most = ServerBackoff(jitter=lambda: 1.0)
    least = ServerBackoff(jitter=lambda: 0.0)
    assert least.busy(2.0) == 2.0
    assert 2.0 < most.busy(2.0) <= 2.0 + 0.52
    assert most.busy(40.0) <= 40.0 + 1.0, "jitter is at most a second"
    assert least.busy(10_000.0) == MAX_PAUSE


def test_without_retry_after_the_pause_doubles_up_to_the_cap_and_a_success_resets_it() -> None:
    backoff = ServerBackoff(first=0.5, cap=3.0, jitter=lambda: 0.0)
    assert [backoff.busy(None) for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    backoff.succeeded()
    assert backoff.busy(None) == 0.5
    assert backoff.busy_answers == 6


def test_every_waiter_sees_the_pause_and_cancel_or_the_deadline_end_it() -> None:
    backoff = ServerBackoff(jitter=lambda: 0.0)
    backoff.busy(30.0)
    assert backoff.pause_left() > 29
    cancelled = threading.Event()
    threading.Timer(0.2, cancelled.set).start()
    assert backoff.wait(cancelled) is False
    assert backoff.wait(threading.Event(), give_up_at=time.monotonic() + 0.1) is True
    assert backoff.wait(threading.Event(), give_up_at=time.monotonic()) is True
