"""Server-sent events framing: lines in, `(event, data)` pairs out.

Follows the SSE rules that OpenAI-compatible servers rely on: `data:` lines of one event are joined
with newlines, a blank line ends the event, lines starting with `:` are comments (keep-alives), and
an event still open when the stream ends is delivered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


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
    if data:
        yield SSEEvent(event or "message", "\n".join(data))
