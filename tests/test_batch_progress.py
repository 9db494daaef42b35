"""The batch ETA counts the instances in flight: replayed on a clock of its own, 64 instances on
16 workers, it is within 25% of the truth at a quarter and at half done (the old pace,
`elapsed / finished × left`, started 9–14x too long and stayed far off while the first wave
finished together)."""

from __future__ import annotations

import heapq
import random

import pytest

from agent_core.batch_progress import BatchProgress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replay(durations: list[float], workers: int) -> tuple[list[tuple[float, float | None]], float]:
    """Run the instances on `workers` against BatchProgress; (time, ETA) after each finish, and
    when the last ended."""
    clock = Clock()
    progress = BatchProgress(clock)
    progress.begin(len(durations), workers)
    waiting = list(enumerate(durations))
    running: list[tuple[float, int]] = []

    def start() -> None:
        index, length = waiting.pop(0)
        progress.started(f"i{index}")
        heapq.heappush(running, (clock.now + length, index))

    for _ in range(min(workers, len(waiting))):
        start()
    seen = []
    while running:
        clock.now, index = heapq.heappop(running)
        progress.finished(f"i{index}", "submitted")
        if waiting:
            start()
        seen.append((clock.now, progress.snapshot()["eta_s"]))
    return seen, clock.now


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("spread", [(40, 60), (20, 100)], ids=["narrow", "wide"])
def test_the_eta_is_within_a_quarter_of_the_truth_at_a_quarter_and_half_done(seed, spread):
    rng = random.Random(seed)
    durations = [rng.uniform(*spread) for _ in range(64)]
    seen, end = replay(durations, workers=16)
    for done in (16, 32):
        at, eta = seen[done - 1]
        truth = end - at
        assert eta is not None and abs(eta - truth) <= 0.25 * truth + 0.1, (done, eta, truth)


def test_the_first_finish_no_longer_predicts_a_multiple_of_the_run():
    """The old pace said 63 instance-lengths (19x the truth) after the first of 16 finished."""
    seen, end = replay([50.0 + i * 0.1 for i in range(64)], workers=16)
    at, eta = seen[0]
    assert eta is not None and 0.5 * (end - at) <= eta <= 2.5 * (end - at)


def test_no_eta_before_a_finish_and_zero_at_the_end():
    clock = Clock()
    progress = BatchProgress(clock)
    progress.begin(2, 2)
    progress.started("a")
    assert progress.snapshot()["eta_s"] is None
    clock.now = 3.0
    progress.finished("a", "skipped")
    assert progress.snapshot()["eta_s"] is None, "a skipped instance says nothing of the pace"
    progress.started("b")
    clock.now = 5.0
    progress.finished("b", "submitted")
    assert progress.snapshot()["eta_s"] == 0
