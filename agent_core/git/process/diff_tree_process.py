"""Tree-pair diffs from one long-lived `git diff-tree --stdin`, started once and asked again at
every edit step: the step diff then costs no git start-up (~0.3 ms where a process costs 2-5).

git reads a pair of tree ids per line and writes the pair, then its diff. A line that is not an
object id it writes back as it is, and flushes: a random line after each pair marks where that
pair's diff ends (no file's text can be expected to hold it).
"""

from __future__ import annotations

import os
import secrets
import select
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from agent_core.git.process.kept_process import stop

# Longest wait for more of one answer before the process is taken for stuck and stopped.
_STALL_SECONDS = 120.0


class DiffTreeProcess:
    """`ask(config, args, old, new)` through one `git <config> diff-tree --stdin <args>` kept
    running (`argv` makes its command line, `env` its environment), started again for other
    `config` or `args`, or if it went away (the model may kill it). Threads take turns."""

    def __init__(self, argv: Callable[..., list[str]], root: Path, env: dict[str, str]) -> None:
        self._argv = argv
        self._root = root
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._started_for: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._lock = threading.Lock()

    def ask(self, config: tuple[str, ...], args: tuple[str, ...], old: str, new: str) -> bytes | None:
        """What `git <config> diff-tree <args> <old> <new>` writes; None when the process could
        not answer (it is then stopped, and the caller runs git once)."""
        with self._lock:
            process = self._running(config, args)
            end = secrets.token_hex(16).encode() + b"\n"
            header = f"{old} {new}\n".encode()
            try:
                assert process.stdin is not None
                process.stdin.write(header + end)
                process.stdin.flush()
                answer = self._read_until(process, end)
            except (OSError, ValueError):
                answer = None
            if answer is None or not answer.startswith(header):
                self._stop()
                return None
            return answer[len(header):-len(end)]

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _running(self, config: tuple[str, ...], args: tuple[str, ...]) -> subprocess.Popen[bytes]:
        if self._process is not None and (self._process.poll() is not None
                                          or self._started_for != (config, args)):
            self._stop()
        if self._process is None:
            self._process = subprocess.Popen(
                self._argv(*config, "diff-tree", "--stdin", *args), cwd=self._root,
                env=self._env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            self._started_for = (config, args)
        return self._process

    @staticmethod
    def _read_until(process: subprocess.Popen[bytes], end: bytes) -> bytes | None:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        chunks: list[bytes] = []
        tail = b""
        while not tail.endswith(end):
            if not select.select([fd], [], [], _STALL_SECONDS)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            chunks.append(chunk)
            tail = (tail + chunk)[-len(end):]
        return b"".join(chunks)

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop(process)
