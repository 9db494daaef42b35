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

DIGITS = str.maketrans("123456789", "000000000")
ZEROS = re.compile(r"0+")
PROBE = 16  # the last characters, looked for again before a whole window is compared


def periodic(text: str, max_period: int) -> str | None:
    """The shortest period (<= max_period) that `text` repeats, or None.

    Only the periods where the last PROBE characters occur again earlier are compared in full,
    and `str.rfind` finds those (in varied text, usually none).
    """
    tail = text[-PROBE:]
    region = text[-(PROBE + max_period):]
    end = len(region) - 1
    while (pos := region.rfind(tail, 0, end)) != -1:
        period = len(region) - PROBE - pos
        if len(text) >= 2 * period and text[period:] == text[:-period]:
            return text[-period:]
        end = pos + PROBE - 1
    return None


class RepetitionGuard:
    """Feed it a reply's chunks; `feed` returns the repeated pattern once the reply loops."""

    def __init__(
        self,
        *,
        exact_window: int = 400,
        loose_window: int = 800,
        max_period: int = 100,
        every: int = 32,
    ) -> None:
        """The tail is checked once `every` characters have arrived since the last check."""
        self.exact_window = exact_window
        self.loose_window = loose_window
        self.max_period = max_period
        self.every = every
        self._tail = ""
        self._loose = ""  # the tail with each run of digits written as one "0"
        self._unchecked = 0

    def feed(self, chunk: str) -> str | None:
        """Add `chunk`; the reply's last repeats (as written) once its tail is a loop, else None."""
        self._tail = (self._tail + chunk)[-max(self.exact_window, 2 * self.max_period):]
        loose = ZEROS.sub("0", chunk.translate(DIGITS))
        if loose.startswith("0") and self._loose.endswith("0"):
            loose = loose[1:]  # a number split across two chunks
        self._loose = (self._loose + loose)[-self.loose_window:]
        self._unchecked += len(chunk)
        if self._unchecked < self.every:
            return None
        self._unchecked = 0
        exact = self._tail[-self.exact_window:]
        if len(exact) == self.exact_window:
            pattern = periodic(exact, self.max_period)
            if pattern is not None:
                return pattern * (2 if len(pattern) < 30 else 1)
        if len(self._loose) == self.loose_window:
            pattern = periodic(self._loose, self.max_period)
            if pattern is not None:
                return self._tail[-2 * len(pattern):]
        return None
