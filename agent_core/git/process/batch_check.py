"""Object sizes from one long-lived `git cat-file --batch-check`, started once and asked again
at every step (a step diff reads the sizes of the blobs it changed)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from agent_core.git.process import deadline
from agent_core.git.process.kept_process import stop

# Requests written before any answer is read: well under a pipe's 64 KiB each way.
_MAX_BATCH = 500
_FORMAT = "--batch-check=%(objectname) %(objectsize)"


class BatchCheck:
    """`sizes(ids)` through one `cat-file --batch-check` kept running (`argv` makes its command
    line, `env` its environment); started again if it went away (the model may kill it), and
    one process per call where that fails too. Threads take turns with it (the session and
    the session-diff thread share one runner): answers come back in the order asked."""

    def __init__(self, argv: Callable[..., list[str]], root: Path, env: dict[str, str]) -> None:
        self._argv = argv
        self._root = root
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def sizes(self, ids: list[str]) -> dict[str, int]:
        """id -> size in bytes of each of `ids` the repository has (missing ones left out)."""
        if not ids:
            return {}
        if len(ids) <= _MAX_BATCH:
            with self._lock:
                for _ in range(2):
                    answer = self._ask(ids)
                    if answer is not None:
                        return _parse(answer)
        result = deadline.run(
            self._argv("cat-file", _FORMAT), cwd=self._root, env=self._env,
            input="".join(f"{i}\n" for i in ids).encode(), stderr=subprocess.DEVNULL,
        )
        return _parse(result.stdout.splitlines())

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop(process)

    def _ask(self, ids: list[str]) -> list[bytes] | None:
        """One answer line per id from the running process; None (and it is stopped) when it
        could not answer."""
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._process = deadline.popen(
                self._argv("cat-file", _FORMAT), cwd=self._root, env=self._env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            with deadline.watched(process, self._root):
                process.stdin.write("".join(f"{i}\n" for i in ids).encode())
                process.stdin.flush()
                lines = [process.stdout.readline() for _ in ids]
        except (OSError, ValueError):
            lines = []
        if len(lines) != len(ids) or not all(line.endswith(b"\n") for line in lines) or any(
            not line.startswith(i.encode()) for i, line in zip(ids, lines)
        ):
            self._stop()
            return None
        return lines


def _parse(lines: list[bytes]) -> dict[str, int]:
    sizes = {}
    for line in lines:
        object_id, _, size = line.decode("ascii", "replace").strip().partition(" ")
        if size.isdigit():
            sizes[object_id] = int(size)
    return sizes
