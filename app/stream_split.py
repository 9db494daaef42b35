"""Split a model turn *as it streams* into thought text (shown at once) and action text (held back).

The thought stream must show what the model thinks, never `<think>` tags or the raw markup of a
tool call; the action is shown on the action card once it is parsed. While text arrives, the
splitter passes on everything before the action's first marker (`<tool_call>`, `<function=`, an
`Action:` line), drops think tags and a leading `Thought:`, and holds back any tail that could be
the start of a marker until the next chunk says what it is.
"""

from __future__ import annotations

import re

from agent_core.formats import DIALECTS, Dialect, get_dialect

# Text dropped wherever it appears in the thought.
DROPPED = ("<think>", "</think>")
THOUGHT_PREFIX = re.compile(r"\A\s*Thought:[ \t]*")


def _dialects(name: str) -> list[Dialect]:
    """The dialect named (`auto` or one navtui does not know: every dialect)."""
    return [get_dialect(d) for d in ((name,) if name in DIALECTS else DIALECTS)]


class StreamSplit:
    """Feed chunks with `feed`; it returns the thought text that may be shown now."""

    def __init__(self, dialect: str) -> None:
        dialects = _dialects(dialect)  # the action's markers are the dialect's (`Dialect`)
        self.markers = tuple(m for d in dialects for m in d.action_markers)
        self.line_start_only = frozenset(
            m for d in dialects if d.markers_at_line_start for m in d.action_markers)
        self.marker_starts = frozenset(m[0] for m in (*DROPPED, *self.markers))
        self.action_names = re.compile("|".join(d.action_name for d in dialects if d.action_name))
        self.thought = ""  # shown so far
        self.action = ""  # the raw action text, from its first marker on
        self._held = ""  # text whose meaning waits on the next chunk
        self._started = False  # past leading whitespace and a `Thought:` prefix

    @property
    def in_action(self) -> bool:
        return bool(self.action)

    @property
    def action_name(self) -> str:
        """The action's name once the model has written it ("" before)."""
        match = self.action_names.search(self.action)
        return next((g for g in match.groups() if g), "") if match else ""

    def feed(self, chunk: str) -> str:
        """Take the next chunk; returns the new thought text to show (maybe "")."""
        if self.action:
            self.action += chunk
            return ""
        text = self._held + chunk
        self._held = ""
        if not self._started:
            stripped = THOUGHT_PREFIX.sub("", text, count=1)
            if not stripped.strip() or _could_become(text.lstrip(), "Thought:"):
                self._held = text
                return ""
            text, self._started = stripped, True
        shown = self._scan(text)
        self.thought += shown
        return shown

    def _scan(self, text: str) -> str:
        out: list[str] = []
        i = 0
        while i < len(text):
            hit = self._marker_at(text, i)
            if hit is None:
                out.append(text[i])
                i += 1
                continue
            marker, complete = hit
            if not complete:
                self._held = text[i:]
                break
            if marker in DROPPED:
                i += len(marker)
                continue
            self.action = text[i:]
            break
        return "".join(out)

    def _marker_at(self, text: str, i: int) -> tuple[str, bool] | None:
        """The marker starting at `i` and whether all of it has arrived, or None."""
        if text[i] not in self.marker_starts:
            return None
        for marker in (*DROPPED, *self.markers):
            piece = text[i : i + len(marker)]
            complete = piece == marker
            if not complete and not (i + len(piece) == len(text) and marker.startswith(piece)):
                continue
            if marker in self.line_start_only and not _at_line_start(text, i, self.thought):
                continue
            return marker, complete
        return None


def _at_line_start(text: str, i: int, before: str) -> bool:
    """True when only spaces lie between the last newline (or the very start) and `i`."""
    line = text[:i].rsplit("\n", 1)
    head = line[-1] if len(line) > 1 else before.rsplit("\n", 1)[-1] + line[0]
    return not head.strip(" \t")


def _could_become(text: str, word: str) -> bool:
    return len(text) < len(word) and word.startswith(text)
