"""Spot a reply that has started repeating itself, whatever backend streams it.

Small models fall into loops such as `add(2, 3) add(4, 5) add(6, 7) ...` and would otherwise
generate until `max_new_tokens` (minutes per turn on a CPU). `RepetitionGuard` is fed the streamed
chunks and says when the tail of the reply is one short period repeated: exactly, over the last
`exact_window` characters, or with every number counted as the same, over the longer
`loose_window` (so a numbered loop is caught while a few similar lines of real code are not).
Characters rather than tokens, so it needs no tokenizer; a token is about 3-4 characters.
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"\d+")


def periodic(text: str, max_period: int) -> str | None:
    """The shortest period (<= max_period) that `text` repeats, or None."""
    for period in range(1, max_period + 1):
        if len(text) >= 2 * period and text[period:] == text[:-period]:
            return text[-period:]
    return None


class RepetitionGuard:
    """Feed it a reply's chunks; `feed` returns the repeated pattern once the reply loops."""

    def __init__(
        self, *, exact_window: int = 400, loose_window: int = 800, max_period: int = 100
    ) -> None:
        self.exact_window = exact_window
        self.loose_window = loose_window
        self.max_period = max_period
        self._tail = ""

    def feed(self, chunk: str) -> str | None:
        """Add `chunk`; the reply's last repeats (as written) once its tail is a loop, else None."""
        self._tail = (self._tail + chunk)[-2 * self.loose_window:]
        exact = self._tail[-self.exact_window:]
        if len(exact) == self.exact_window:
            pattern = periodic(exact, self.max_period)
            if pattern is not None:
                return pattern * (2 if len(pattern) < 30 else 1)
        loose = NUMBER.sub("0", self._tail)[-self.loose_window:]
        if len(loose) == self.loose_window:
            pattern = periodic(loose, self.max_period)
            if pattern is not None:
                return self._tail[-2 * len(pattern):]
        return None
