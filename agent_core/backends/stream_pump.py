"""Read a reply in a thread of its own, so the thread that consumes it hears about silence.

`pump(source)` runs `source` (an iterator that blocks on the network) in a daemon thread and
yields its items, or an `Idle` every `tick` seconds in which nothing came: the consumer can say
that it waits, give up after `--request-timeout`, or stop reading on for a usage chunk, all from
its own thread. An exception in `source` is raised in the consumer. Closing the consumer's
generator stops the reader at its next item; the caller shuts the socket to wake a read that
blocks.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

QUEUE_SIZE = 256


@dataclass(frozen=True)
class Idle:
    """Nothing came for `seconds` (since the last item, or since the start)."""

    seconds: float


_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def pump(source: Iterator[Any], tick: float = 0.25,
         name: str = "navtui-reader") -> Generator[Any, None, None]:
    """`source`'s items, with an `Idle` for every `tick` seconds without one; see the module
    docstring."""
    items: queue.Queue[Any] = queue.Queue(QUEUE_SIZE)
    stopped = threading.Event()

    def put(item: Any) -> bool:
        while not stopped.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for item in source:
                if not put(item):
                    break
        except BaseException as error:  # handed to the consumer, which raises it
            put(_Failed(error))
        else:
            put(_END)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    threading.Thread(target=read, name=name, daemon=True).start()
    last = time.monotonic()
    try:
        while True:
            try:
                item = items.get(timeout=tick)
            except queue.Empty:
                yield Idle(time.monotonic() - last)
                continue
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            last = time.monotonic()
            yield item
    finally:
        stopped.set()
