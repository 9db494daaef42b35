"""A program in a real pseudo-terminal, watched from outside as a user sees it.

`Terminal` spawns a command in a pty (pexpect) and reads everything it writes on a thread of
the bench's own, feeding a VT emulator (pyte). After each read it looks only at the screen lines
that read changed: the first time each marker word (`m00042`, see `marker`) appears, and the
first time an awaited text appears, are recorded with the time of that read. Nothing runs
inside the program watched: what is timed is the bytes it wrote to its terminal, as a terminal
would show them.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pexpect
import pyte

MARKER = re.compile(r"\bm(\d{5})\b")


def marker(n: int) -> str:
    """The word the text carries as its n-th marker (its appearance on screen is timed)."""
    return f"m{n:05d}"


class Terminal:
    """`command` running in a `columns` x `rows` pty, its screen kept by pyte."""

    def __init__(self, command: Sequence[str], *, columns: int = 120, rows: int = 40,
                 env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        self.screen = pyte.Screen(columns, rows)
        self._stream = pyte.ByteStream(self.screen)
        self.markers_seen: dict[int, float] = {}  # marker number -> first time on screen
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._awaited: str | None = None
        self._awaited_at: float | None = None
        self.bytes_read = 0
        self.ended_at: float | None = None  # when the program closed its terminal
        self.child = pexpect.spawn(command[0], list(command[1:]), dimensions=(rows, columns),
                                   env=env, cwd=str(cwd) if cwd else None, timeout=None)
        self._reader = threading.Thread(target=self._read, name="terminal-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        fd = self.child.child_fd
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            now = time.monotonic()
            with self._lock:
                if not data:
                    self.ended_at = now
                    self._changed.notify_all()
                    return
                self.bytes_read += len(data)
                self._stream.feed(data)
                self._look(now)
                self._changed.notify_all()

    def _look(self, now: float) -> None:
        screen = self.screen
        for y in screen.dirty:
            line = screen.buffer[y]
            text = "".join(line[x].data for x in range(screen.columns))
            for found in MARKER.finditer(text):
                self.markers_seen.setdefault(int(found.group(1)), now)
            if self._awaited is not None and self._awaited_at is None and self._awaited in text:
                self._awaited_at = now
        screen.dirty.clear()

    def text(self) -> str:
        """The whole screen as text, one line per row."""
        with self._lock:
            return "\n".join(self.screen.display)

    def wait_for(self, text: str, timeout: float = 60.0) -> float:
        """Block until `text` is on screen (already, or drawn later); the monotonic time it was."""
        deadline = time.monotonic() + timeout
        with self._lock:
            if any(text in line for line in self.screen.display):
                return time.monotonic()
            self._awaited, self._awaited_at = text, None
            try:
                while self._awaited_at is None:
                    left = deadline - time.monotonic()
                    if left <= 0 or not self._reader.is_alive():
                        raise TimeoutError(f"{text!r} not on screen after {timeout:g} s:\n"
                                           + "\n".join(self.screen.display))
                    self._changed.wait(min(left, 0.5))
                return self._awaited_at
            finally:
                self._awaited = None

    def press(self, keys: bytes, then_shows: str, timeout: float = 30.0) -> float:
        """Send `keys` as a user's terminal would and wait for a line that was redrawn after it
        to contain `then_shows`; seconds from the write to that read."""
        with self._lock:
            self._awaited, self._awaited_at = then_shows, None
            sent = time.monotonic()
            os.write(self.child.child_fd, keys)
            deadline = sent + timeout
            try:
                while self._awaited_at is None:
                    left = deadline - time.monotonic()
                    if left <= 0 or not self._reader.is_alive():
                        raise TimeoutError(f"{keys!r} showed no {then_shows!r} in {timeout:g} s:\n"
                                           + "\n".join(self.screen.display))
                    self._changed.wait(min(left, 0.5))
                return self._awaited_at - sent
            finally:
                self._awaited = None

    def wait_exit(self, timeout: float = 600.0) -> float:
        """Block until the program closes its terminal (exits); the monotonic time it did."""
        self._reader.join(timeout)
        if self.ended_at is None:
            raise TimeoutError(f"still running after {timeout:g} s:\n" + self.text())
        return self.ended_at

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self._reader.join(5)


# Bytecode of the programs under test, kept outside the checkout (as an installed package has its
# own): without it every start would compile navtui from source.
PYCACHE = Path(tempfile.gettempdir()) / "navtui-bench-pycache"


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment for a program under test: its own HOME, a real TERM, bytecode cached
    under PYCACHE (never in the checkout)."""
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(home), "PYTHONPYCACHEPREFIX": str(PYCACHE), "LANG": "C.UTF-8",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "COLORTERM": "truecolor"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return env
