"""Every git process navtui starts ends: git reads what the model could have written (a FIFO
planted as a pack index, a `HEAD` or a config include waits for a writer for ever; a sparse
terabyte file hashes for hours), so each one runs in a process group of its own that is killed
past `TIMEOUT_S`, and navtui says which command it was instead of hanging.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_core.git.errors import WorkspaceError

# Seconds one git process may run. Generous: a first checkpoint of a huge repository is the
# longest legitimate call; what it bounds is a read that never ends.
TIMEOUT_S = 600.0


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and whatever it started (its own process group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def late(args: list[str] | tuple[str, ...], where: Path | str) -> WorkspaceError:
    """The error for a git command killed at the deadline."""
    command = next((a for a in args[1:] if not a.startswith("-") and "=" not in a), "git")
    return WorkspaceError(
        f"`git {command}` did not finish within {TIMEOUT_S:g} s in {where} and was stopped: "
        "a FIFO, device or endless file in the repository or its git dir (something the model "
        "made?) can do that. `find .git -type p` lists FIFOs; remove what is not git's."
    )


def run(argv: list[str], *, cwd: Path | str, input: bytes | None = None,
        **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run(argv, ...)` with stdout and stderr captured unless given, killed (with
    its children) past `TIMEOUT_S`: WorkspaceError."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    if input is None:
        kwargs.setdefault("stdin", subprocess.DEVNULL)
    else:
        kwargs["stdin"] = subprocess.PIPE
    with subprocess.Popen(argv, cwd=cwd, start_new_session=True, **kwargs) as process:
        try:
            out, err = process.communicate(input, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()
            raise late(argv, cwd) from None
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen` in a process group of its own, for `watched`."""
    process: subprocess.Popen[bytes] = subprocess.Popen(argv, start_new_session=True, **kwargs)
    return process


@contextlib.contextmanager
def watched(process: subprocess.Popen[bytes], where: Path | str,
            seconds: float | None = None) -> Iterator[None]:
    """Within the block, `process` (from `popen`, run in `where`) is killed past `seconds`
    (default `TIMEOUT_S`); raises WorkspaceError after the block when that happened."""
    fired = threading.Event()

    def expire() -> None:
        fired.set()
        _kill(process)

    timer = threading.Timer(TIMEOUT_S if seconds is None else seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except (OSError, ValueError, WorkspaceError):
        if not fired.is_set():
            raise
    finally:
        timer.cancel()
    if fired.is_set():
        raise late([str(arg) for arg in process.args], where)  # type: ignore[union-attr]
