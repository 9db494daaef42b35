"""Stopping a git process navtui keeps running between calls (`cat-file --batch-check`,
`diff-tree --stdin`)."""

from __future__ import annotations

import subprocess


def stop(process: subprocess.Popen[bytes]) -> None:
    """Close its pipes (git exits at the end of its input), kill it if it is still running,
    and reap it."""
    for pipe in (process.stdin, process.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:  # it went away with a request unread
            pass
    if process.poll() is None:
        process.kill()
    process.wait()
