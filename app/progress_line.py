"""`navtui batch`'s live progress line on stderr (counts and ETA from `BatchProgress`).

On a terminal the line is redrawn in place every second and after each result, and cleared
before a result is printed above it; elsewhere (a log, CI) it is printed once after each result.
"""

from __future__ import annotations

import threading

from rich.console import Console

from agent_core.batch_progress import BatchProgress


class ProgressLine:
    def __init__(self, console: Console, progress: BatchProgress, every: float = 1.0) -> None:
        self.console = console
        self.progress = progress
        self.every = every
        self.live = console.is_terminal
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.live and self._thread is None:
            self._thread = threading.Thread(target=self._redraw, name="navtui-progress",
                                            daemon=True)
            self._thread.start()

    def draw(self) -> None:
        text = self.progress.line()
        with self._lock:
            if self.live:
                self.console.file.write(f"\r{text}\x1b[K")
                self.console.file.flush()
            else:
                self.console.print(text, highlight=False, markup=False)

    def clear(self) -> None:
        if self.live:
            with self._lock:
                self.console.file.write("\r\x1b[K")
                self.console.file.flush()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        self.clear()

    def _redraw(self) -> None:
        while not self._stop.wait(self.every):
            self.draw()
