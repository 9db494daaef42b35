"""Client-side stop strings for streamed text.

`stop_after` strings end the turn and stay in the output (`</tool_call>`); `stop_before` strings
end it and are cut (a model starting to write its own `Observation:`). Text that could be the start
of a stop string is held back until the next chunk decides, so a cut string never reaches the
caller.

A `stop_after` string that closes a tag (`</tool_call>`, `</function>`) ends the turn only when
what follows is not another opening of the same tag: a turn of parallel tool calls is read to
its last call, so the dialect parser can run the first and tell the model the others did not
run (what it tells a replayed turn). Whitespace between the calls is held back meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

CLOSING_TAG = re.compile(r"</([A-Za-z_][\w-]*)>")


class StopScanner:
    """Feed streamed chunks; get back the text safe to show and whether the turn is over."""

    def __init__(self, stop_after: Sequence[str] = (), stop_before: Sequence[str] = ()) -> None:
        self._after = [s for s in stop_after if s]
        self._before = [s for s in stop_before if s]
        self._held = ""
        self._reopen: str | None = None  # after a closing tag: the opening that goes on
        self._after_close = ""  # text since that closing tag, held until it decides
        self.done = False
        self.matched: str | None = None

    def feed(self, chunk: str) -> str:
        """Return the part of `chunk` (plus held text) that can be emitted now."""
        if self.done:
            return ""
        if self._reopen is not None:
            return self._after_tag(chunk)
        text = self._held + chunk
        cut = self._earliest_stop(text)
        if cut is not None:
            self._held = ""
            tag = CLOSING_TAG.fullmatch(self.matched or "")
            if tag is None or self.matched not in self._after:
                self.done = True
                return text[:cut]
            self._reopen = f"<{tag.group(1)}"
            return text[:cut] + self._after_tag(text[cut:])
        keep = self._partial_suffix(text)
        self._held = text[len(text) - keep:] if keep else ""
        return text[: len(text) - keep]

    @property
    def closed(self) -> bool:
        """A closing tag ended the text so far: the turn is over unless another call opens."""
        return self.done or self._reopen is not None

    def flush(self) -> str:
        """The held-back tail once the stream has ended without a stop."""
        text, self._held = self._held, ""
        return "" if self.done or self._reopen is not None else text

    def _after_tag(self, chunk: str) -> str:
        """After a closing tag: go on when another opening of the tag follows (whitespace
        between them), else the turn is over."""
        text = self._after_close + chunk
        stripped = text.lstrip()
        opening = self._reopen or ""
        if stripped.startswith(opening):
            self._reopen, self._after_close = None, ""
            return self.feed(text)
        if opening.startswith(stripped):
            self._after_close = text
            return ""
        self.done = True
        return ""

    def _earliest_stop(self, text: str) -> int | None:
        """End of emitted text for the earliest stop string in `text`, or None."""
        best: tuple[int, int, str] | None = None
        for stop, keep in [(s, True) for s in self._after] + [(s, False) for s in self._before]:
            at = text.find(stop)
            if at < 0:
                continue
            end = at + len(stop) if keep else at
            if best is None or at < best[0]:
                best = (at, end, stop)
        if best is None:
            return None
        self.matched = best[2]
        return best[1]

    def _partial_suffix(self, text: str) -> int:
        """Length of the longest tail of `text` that is a proper prefix of some stop string."""
        longest = 0
        for stop in self._after + self._before:
            for size in range(min(len(stop) - 1, len(text)), longest, -1):
                if text.endswith(stop[:size]):
                    longest = size
                    break
        return longest
