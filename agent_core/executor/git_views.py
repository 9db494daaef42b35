"""The model's own view of the user's git directories: an overlay whose writable layer navtui
keeps outside the repository, one per git directory, for the whole session.

Inside the sandbox each git directory is the lower layer of an overlay (bwrap's
`--overlay-src REAL --overlay UPPER WORK DEST`): the model's git reads the user's files and
writes into UPPER, so `add`, `commit`, `stash`, `checkout` work in its own view while the real
directory is never written. The layers live in one directory navtui makes (mode 0700, outside
the repository and the sandbox's sight), named after the git directory and its inode, so the
model's git state survives a shell restart (a timeout, an interrupt, a new `.git`) within the
session; navtui never reads them, and removes them all when the session ends (`close`), or,
when a navtui was killed, the next navtui that makes its own (their names hold the pid).

`overlay_problem` starts bwrap once with such an overlay, to tell whether this machine can
(kernel 5.11+ for an overlay in a user namespace, bubblewrap 0.11+, an upper layer's file system
that overlayfs accepts); where it cannot, the git directories are bound read-only instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import weakref
from pathlib import Path

PROBE_TIMEOUT = 10.0
_PREFIX = "navtui-git-view-"  # then the pid of the navtui that made it


def _allow_owner(directory: int) -> None:
    """Give the owner every right on `directory` (an O_PATH descriptor: works on a directory
    of mode 000 too) through /proc, which names the very inode, never a link's target."""
    os.chmod(f"/proc/self/fd/{directory}", stat.S_IRWXU)


def _remove(path: Path) -> None:
    """Remove a views directory whatever the model made in it: its directories may have any
    mode (overlayfs leaves its work directory at 000, and a `chmod` in the model's view copies
    a directory up with that mode); a symlink is removed, never followed. (No process of the
    sandbox runs by then: nothing changes under the walk.)"""
    pending = [str(path)]
    while pending:
        directory = pending.pop()
        try:
            handle = os.open(directory, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            _allow_owner(handle)
            with os.scandir(directory) as entries:
                pending += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
        except OSError:
            pass
        finally:
            os.close(handle)
    shutil.rmtree(path, ignore_errors=True)


def _sweep(parent: Path) -> None:
    """Remove the views a killed navtui left in `parent` (no process has its pid now), the
    user's own only."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        pid = entry.name.removeprefix(_PREFIX).partition("-")[0]
        if not entry.name.startswith(_PREFIX) or not pid.isdigit():
            continue
        try:
            mine = entry.stat(follow_symlinks=False).st_uid == os.getuid()
            if not mine or not entry.is_dir(follow_symlinks=False):
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            _remove(Path(entry.path))
        except OSError:
            continue


class GitViews:
    """The writable layers of one session's overlays, under a directory made in `parent`
    (default: the system's temporary directory) on first use."""

    def __init__(self, parent: Path | None = None) -> None:
        self._parent = parent
        self.path: Path | None = None
        self._cleanup: weakref.finalize | None = None

    def layers(self, real: Path, inside: str) -> tuple[str, str]:
        """(upper, work) directories for the overlay of git dir `real` mounted at `inside`;
        the same ones for the same directory all session (another inode: fresh ones)."""
        if self.path is None:
            where = str(self._parent) if self._parent is not None else None
            self.path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=where))
            self._cleanup = weakref.finalize(self, _remove, self.path)
            _sweep(self.path.parent)
        try:
            inode = os.stat(real).st_ino
        except OSError:
            inode = 0
        name = hashlib.sha1(f"{inode}\0{real}\0{inside}".encode("utf-8", "surrogateescape"))
        layer = self.path / name.hexdigest()[:20]
        upper, work = layer / "upper", layer / "work"
        upper.mkdir(parents=True, exist_ok=True)
        work.mkdir(exist_ok=True)
        return str(upper), str(work)

    def close(self) -> None:
        """Remove every layer (the shell must be gone); a later one starts afresh."""
        if self._cleanup is not None:
            self._cleanup()
        self.path, self._cleanup = None, None


@functools.cache
def overlay_problem(bwrap: str, mounts: tuple[str, ...], parent: str | None = None) -> str | None:
    """Why an overlay over a git directory cannot be mounted in the sandbox here (bwrap's own
    words), or None when it can. `mounts`: the system directories' bwrap arguments; `parent`:
    where the layers will live. Checked once per process."""
    with tempfile.TemporaryDirectory(prefix="navtui-overlay-probe-", dir=parent) as scratch:
        lower, views = Path(scratch, "lower"), GitViews(Path(scratch))
        lower.mkdir()
        (lower / "HEAD").write_text("ref: refs/heads/main\n")
        upper, work = views.layers(lower, "/probe")
        argv = [bwrap, "--die-with-parent", "--unshare-user", "--unshare-pid", "--tmpfs", "/",
                *mounts, "--dev", "/dev", "--proc", "/proc",
                "--overlay-src", str(lower), "--overlay", upper, work, "/probe",
                "--", "/bin/sh", "-c", "echo written > /probe/HEAD && cat /probe/HEAD"]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bwrap could not run: {error}"
        finally:
            views.close()
        said = done.stderr.decode(errors="replace").strip()
        if done.returncode or done.stdout != b"written\n":
            return said or f"exit status {done.returncode}"
        if (lower / "HEAD").read_text() != "ref: refs/heads/main\n":
            return "the overlay wrote through to the real directory"
    return None
