"""Anchor: the streamed text in a `rich.live.Live` (no framework), its last lines filling the
screen under a `keys: N` line that counts the `d` keys read from the terminal.

    python bench/anchors/rich_live.py BASE_URL

Live redraws on its own thread at 60 frames a second; a key only changes the count, shown with
the next frame. `q` quits.
"""

from __future__ import annotations

import sys
import termios
import threading
import tty

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.text import Text

from feed_client import fragments

KEEP = 20_000  # characters of the end of the text drawn (more than a screen holds)


class Tail:
    """The last lines of the text that fit under the key count."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.keys = 0

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = "".join(self.parts)[-KEEP:]
        self.parts = [text]
        height = (options.height or console.height) - 1
        lines = console.render_lines(Text(text), options.update(height=None), pad=False)
        yield Text(f"keys: {self.keys}", style="bold")
        for line in lines[-height:]:
            yield from line
            yield Segment.line()


def main() -> None:
    tail = Tail()
    console = Console()
    feeder = threading.Thread(target=lambda: [tail.parts.append(t) for t in fragments(sys.argv[1])],
                              daemon=True)
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        with Live(tail, console=console, screen=True, refresh_per_second=60):
            feeder.start()
            while (key := sys.stdin.buffer.read1(1)) and key != b"q":
                if key == b"d":
                    tail.keys += 1
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    main()
