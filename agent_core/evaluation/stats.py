"""The paired comparison of two adapters on the same tasks.

Each task is solved or not by each adapter: the tasks only one of them solves carry the
difference. `compare` gives the counts, the difference of resolved rates (B minus A) with a
percentile bootstrap confidence interval over tasks (resampled in pairs, seeded, so a re-run
prints the same interval), and McNemar's exact test (the two-sided binomial test on the
discordant tasks: with few tasks the chi-squared approximation is wrong).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from math import comb
from typing import Any

BOOTSTRAP_SAMPLES = 2000


@dataclass
class Paired:
    """A (the reference) against B on the tasks both were run on."""

    a: str
    b: str
    tasks: int
    both: int
    only_a: list[str]
    only_b: list[str]
    difference: float  # resolved rate of B minus A's
    ci_low: float
    ci_high: float
    p_value: float  # McNemar's exact test

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact p of `only_a` against `only_b` discordant pairs (1.0 with none)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def bootstrap_interval(pairs: list[tuple[bool, bool]], level: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile interval of mean(b - a) over tasks resampled with replacement."""
    if not pairs:
        return 0.0, 0.0
    deltas = [int(b) - int(a) for a, b in pairs]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(deltas, k=len(deltas))) / len(deltas)
                   for _ in range(BOOTSTRAP_SAMPLES))
    cut = (1 - level) / 2
    return means[int(cut * (BOOTSTRAP_SAMPLES - 1))], means[int((1 - cut) * (BOOTSTRAP_SAMPLES - 1))]


def compare(a: str, b: str, solved_a: dict[str, bool], solved_b: dict[str, bool]) -> Paired:
    """A against B on the tasks both have a result for."""
    common = sorted(set(solved_a) & set(solved_b))
    pairs = [(solved_a[t], solved_b[t]) for t in common]
    only_a = [t for t in common if solved_a[t] and not solved_b[t]]
    only_b = [t for t in common if solved_b[t] and not solved_a[t]]
    low, high = bootstrap_interval(pairs)
    return Paired(
        a=a, b=b, tasks=len(common), both=sum(1 for x, y in pairs if x and y),
        only_a=only_a, only_b=only_b,
        difference=(len(only_b) - len(only_a)) / len(common) if common else 0.0,
        ci_low=low, ci_high=high, p_value=mcnemar_exact(len(only_a), len(only_b)),
    )
