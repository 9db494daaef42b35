"""One navtui session per repository at a time: a pid file at `.git/navtui/lock`.

The file names the session, its process and when it started. A lock whose process is gone (or
whose pid now belongs to another program, told apart by the process start time) is stale and
taken over. The same process may take it again (resume after quit in one TUI run, tests).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from agent_core.git.errors import WorkspaceError
from agent_core.git.process.safe_files import read_regular, write_bytes

LOCK_NAME = "lock"


class SessionLocked(WorkspaceError):
    """Another live navtui session holds the repository."""


@dataclass(frozen=True)
class LockOwner:
    session: str
    pid: int
    started: str  # ISO time the session took the lock
    process_start: str  # the process's start time from /proc ("" where unknown)


def _process_start(pid: int) -> str:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks); "" when unavailable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return ""
    return stat.rsplit(b")", 1)[-1].split()[19].decode()


def _alive(owner: LockOwner) -> bool:
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    start = _process_start(owner.pid)
    return not (start and owner.process_start and start != owner.process_start)


def read_owner(path: Path) -> LockOwner | None:
    """The lock's owner, or None when there is no readable lock."""
    try:
        data = json.loads(read_regular(path, 1 << 16))
        return LockOwner(str(data["session"]), int(data["pid"]), str(data["started"]),
                         str(data.get("process_start", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_free(state_dir: Path, repo: Path) -> LockOwner | None:
    """Raise SessionLocked if another live process holds the lock; returns the owner read."""
    path = state_dir / LOCK_NAME
    owner = read_owner(path)
    if owner is not None and owner.pid != os.getpid() and _alive(owner):
        raise SessionLocked(
            f"another navtui session is working on {repo}: session {owner.session}, "
            f"process {owner.pid}, started {owner.started}. Finish or quit it first (two "
            f"sessions would undo each other's files); if that process is gone, delete "
            f"{path} and try again."
        )
    return owner


def acquire(state_dir: Path, session_id: str, repo: Path) -> Path:
    """Take the repository's session lock for `session_id`; SessionLocked names the holder."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_NAME
    me = LockOwner(session_id, os.getpid(), datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   _process_start(os.getpid()))
    for _ in range(5):
        owner = check_free(state_dir, repo)
        tmp = state_dir / f"{LOCK_NAME}.{me.pid}.tmp"
        write_bytes(tmp, json.dumps(asdict(me)).encode())
        if owner is None and not path.exists():
            try:
                os.link(tmp, path)  # fails if someone else created it meanwhile
            except FileExistsError:
                tmp.unlink(missing_ok=True)
                continue
            tmp.unlink(missing_ok=True)
        else:
            os.replace(tmp, path)
        if read_owner(path) == me:
            return path
    raise SessionLocked(f"could not take the session lock {path}: another process keeps changing it")


def release(state_dir: Path) -> None:
    """Give the lock up if this process holds it."""
    path = state_dir / LOCK_NAME
    owner = read_owner(path)
    if owner is not None and owner.pid == os.getpid():
        path.unlink(missing_ok=True)
