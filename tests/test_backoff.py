"""The busy-server backoff shared by a batch's backends: an in-flight limit learned from 429s
while others are served (only the refused request waits, for its Retry-After, never shorter),
a pause for everyone when nobody is served, slow probing past the last refused level, jitter
bounded."""

from __future__ import annotations

import time

from agent_core.backends.backoff import MAX_PAUSE, ServerBackoff


def test_retry_after_is_never_shortened_and_jitter_is_bounded() -> None:
    most = ServerBackoff(jitter=lambda: 1.0)
    least = ServerBackoff(jitter=lambda: 0.0)
    for backoff in (most, least):
        assert backoff.acquire(0) is None
    assert least.refused(2.0) == 2.0
    assert 2.0 < most.refused(2.0) <= 2.0 + 0.52
    least.acquire(10)
    assert least.refused(10_000.0) <= MAX_PAUSE + 1.0


def test_without_retry_after_the_pause_doubles_up_to_the_cap() -> None:
    backoff = ServerBackoff(first=0.5, cap=3.0, jitter=lambda: 0.0)
    backoff.acquire(0)
    assert [backoff.refused(None, attempt) for attempt in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert backoff.busy_answers == 5


def test_a_refusal_while_others_are_served_sets_the_limit_and_pauses_no_one_else() -> None:
    backoff = ServerBackoff(jitter=lambda: 0.0)
    for _ in range(6):
        assert backoff.acquire(0) is None
    backoff.refused(5.0)  # 5 still in flight: the server takes 5
    backoff.refused(5.0)  # 4 in flight
    assert backoff.limit == 4 and backoff.pause_left() == 0
    assert backoff.acquire(0) == 0.0, "the limit is full"
    backoff.release(True)
    assert backoff.acquire(0) is None


def test_a_refusal_with_nobody_served_pauses_everyone_and_cancel_ends_a_wait() -> None:
    backoff = ServerBackoff(jitter=lambda: 0.0)
    backoff.acquire(0)
    backoff.refused(30.0)
    assert backoff.pause_left() > 29 and backoff.limit == 1
    started = time.monotonic()
    assert backoff.acquire(0.2) > 29
    assert 0.15 < time.monotonic() - started < 1.0


def test_the_limit_grows_back_quickly_below_the_refused_level_and_slowly_at_it() -> None:
    backoff = ServerBackoff(jitter=lambda: 0.0, probe_after=10)
    for _ in range(5):
        backoff.acquire(0)
    for _ in range(4):
        backoff.refused(None)  # 1 in flight: limit 1, refused at 2 in flight
    backoff.release(True)
    assert backoff.limit == 1

    def serve(times: int) -> None:
        for _ in range(times):
            while backoff.acquire(0) is None:
                pass  # fill the limit: the next request waits (demand)
            backoff.release(True)

    serve(1)
    assert backoff.limit == 1, "at the refused level: slow"
    serve(10)
    assert backoff.limit == 2
    serve(10)
    assert backoff.limit == 3
