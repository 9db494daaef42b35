"""Server-sent events framing: lines in, `(event, data)` pairs out.

Follows the SSE rules that OpenAI-compatible servers rely on: `data:` lines of one event are joined
with newlines, a blank line ends the event, lines starting with `:` are comments (keep-alives), and
an event still open when the stream ends is delivered. One leniency: a line with no known field
inside an event continues its data. `transformers serve` writes error messages with raw newlines
into `data:` (`data: {"error": "...\nContent: ...\nError: ..."}`); the spec would drop those
lines, and with them the message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


KNOWN_FIELDS = frozenset({"data", "event", "id", "retry"})


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event; `event` is "message" unless the server named it."""

    event: str
    data: str


def iter_sse_events(lines: Iterable[str]) -> Iterator[SSEEvent]:
    """Group decoded lines (without their line endings) into events."""
    event = ""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
        elif field not in KNOWN_FIELDS and data:
            data.append(line)
    if data:
        yield SSEEvent(event or "message", "\n".join(data))
