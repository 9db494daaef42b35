"""The durable session log: one JSON object per line, appended and flushed as events happen.

A `TrajectoryWriter` is a Session listener. Each line is `{"type": <event class>, "t": <unix
time>, ...fields}`; `read_trajectory` turns a file back into typed events. What is stored:

* every event except `TokenStreamed`: tokens are not stored one per line, because the complete
  raw model output of each turn is kept with its `StepProposed` / `FormatError` (so a log holds
  every byte the model wrote without one line per token);
* a `writer` line each time a process opens the log (its pid, whether it resumed), so
  `list_sessions` can tell a live session from one that crashed;
* a `meta` line for facts outside the event stream (e.g. a batch's `instance_id`).

Beside the logs of a repo, `sessions/index.ndjson` (`SessionsIndex`) caches what `navtui
sessions` and the start screen show of each log; the writer adds a line when a session starts
and finishes, and listing re-reads only logs that changed since.

Lines are flushed as written, so a `kill -9` loses at most a proposal that was not decided yet.
Against a power cut they are fsync'ed at step boundaries (started, executed, rejected, undone,
notices, user messages), at most once every `SYNC_INTERVAL` seconds (one fsync per step cost
~2 ms, a sixth of a step on this machine), and always at the end and on close: a cut loses
at most that second. A torn last line (killed mid-write) is ignored by the reader.

The log is bounded: a string longer than `FIELD_LIMIT` characters (a huge created file, the
diff of a deleted one) is stored as its head and tail around a marker with its length and
SHA-256 (`cap_strings`, `was_cut`); the files themselves stay in the checkpoints. Past
`LOG_BUDGET` bytes, strings are cut to `SMALL_FIELD_LIMIT`. Text that no UTF-8 file could hold
(lone surrogates from undecodable bytes) and control characters are written as JSON escapes, so
the file stays valid UTF-8 and reads back exactly.

Secrets never reach the file: string values under keys that name a credential (`api_key`,
`token`, `authorization`, `*_token`, ...) are replaced by "[redacted]" wherever they appear, and
any literal secret the caller passes (e.g. the `--api-key` value) and passwords in URLs
(`https://user:password@host`) are replaced in every line.

The JSON form of each event is `agent_core.event_codec`'s; what keeps secrets out and strings
bounded is `agent_core.redaction`'s (both importable from here as before).
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from agent_core.event_codec import (  # the codec's names, importable from here as before
    decision_from_dict,
    decision_to_dict,
    event_from_dict,
    event_to_dict,
    record_from_dict,
    record_to_dict,
)
from agent_core.events import (
    Event,
    Notice,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    TokenStreamed,
    UserMessage,
)
from agent_core.finish import FinishReason
from agent_core.git import GitRunner, append_owned, open_append, read_regular, write_bytes
from agent_core.history import standing_records
from agent_core.redaction import (  # importable from here as before
    CUT_MARKER,
    MIN_SECRET_LENGTH,
    REDACTED,
    cap_strings,
    for_log,
    redact,
    redact_event,
    scrub,
    was_cut,
)
from agent_core.sanitize import json_safe
from agent_core.steps import Origin, StepRecord, decision_counts

__all__ = [
    "CUT_MARKER", "FIELD_LIMIT", "FORKED_AT", "FORKED_FROM", "LOG_BUDGET", "MIN_SECRET_LENGTH",
    "REDACTED", "SMALL_FIELD_LIMIT", "SessionSummary", "SessionsIndex", "Trajectory", "TrajectoryError",
    "TrajectoryWriter", "cap_strings", "decision_from_dict", "decision_to_dict",
    "default_path", "event_from_dict", "event_to_dict", "find_trajectory", "iter_sessions",
    "list_sessions", "read_trajectory", "record_from_dict", "record_to_dict",
    "redact", "redact_event", "repo_state_dir", "resume_refusal", "scrub", "sessions_dir",
    "was_cut",
]

# Bounds on what one session writes: any string longer than FIELD_LIMIT characters (a 50 MB
# created file, the diff of a deleted 200 MB file) is logged as its head and tail around a
# CUT_MARKER line; once the log holds LOG_BUDGET bytes, strings are cut to SMALL_FIELD_LIMIT.
FIELD_LIMIT = 256 * 1024
SMALL_FIELD_LIMIT = 4 * 1024
LOG_BUDGET = 64 * 1024 * 1024
INDEX_BYTES = 64 * 1024 * 1024  # a sessions index past this is not navtui's: rebuilt
LOG_BYTES = 1 << 30  # a log past this is not one navtui wrote (LOG_BUDGET and the last events)
_SYNC_TYPES = (
    SessionStarted, StepExecuted, StepRejected, StepUndone, Notice, UserMessage, SessionFinished
)
SYNC_INTERVAL = 1.0
# The `meta` facts of a fork's log (`navtui fork`): the session it was forked from, at which step.
FORKED_FROM = "forked_from"
FORKED_AT = "forked_at"


class TrajectoryError(Exception):
    """The log cannot be used; the message says which file and what to do."""


def repo_state_dir(repo: Path | str) -> Path:
    """`<git dir>/navtui` of `repo` (`Workspace.state_dir`); raises TrajectoryError.

    A linked worktree has its own git dir, so its sessions are listed and resumed there only.
    The top of a repository whose `.git` is a directory needs no git process to say so.
    """
    dot_git = Path(repo) / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink() and (dot_git / "HEAD").is_file():
        return dot_git.resolve() / "navtui"
    result = GitRunner(Path(repo)).run_full("rev-parse", "--absolute-git-dir", ok_codes=(0, 128))
    if result.returncode != 0:
        raise TrajectoryError(
            f"{repo} is not a git repository ({os.fsdecode(result.stderr).strip()}); "
            "pass the repository navtui ran on"
        )
    return Path(os.fsdecode(result.stdout).strip()) / "navtui"


def sessions_dir(state_dir: Path) -> Path:
    """Where session logs live, given a repo's navtui state dir (`.git/navtui`)."""
    return state_dir / "sessions"


def default_path(state_dir: Path, session_id: str) -> Path:
    """`.git/navtui/sessions/<id>.jsonl`: inside .git, so the repository never looks dirty."""
    return sessions_dir(state_dir) / f"{session_id}.jsonl"


class TrajectoryWriter:
    """Appends every event to `path` (a Session listener: `session.subscribe(writer)`).

    Thread-safe. `secrets` are literal strings (e.g. an API key) replaced in every line.
    `resumed=True` marks that this process continues an existing log. Nothing is written before
    the first event, so a writer can be made before the log it will extend has been read.
    """

    def __init__(
        self, path: Path | str, *, secrets: Iterable[str] = (), resumed: bool = False,
        field_limit: int | None = FIELD_LIMIT, budget: int = LOG_BUDGET,
    ):
        self.path = Path(path)
        self._secrets = [s for s in secrets if s]
        self._resumed = resumed
        self.field_limit = field_limit
        self.budget = budget
        self._size = self.path.stat().st_size if self.path.is_file() else 0
        self._lock = threading.Lock()
        self._file: TextIO | None = None
        self._closed = False
        self._synced_at = float("-inf")
        self._unsynced = False  # a step boundary written and not yet fsync'ed

    def __call__(self, event: Event) -> None:
        if isinstance(event, TokenStreamed):
            return
        self._write(event_to_dict(event), sync=isinstance(event, _SYNC_TYPES),
                    now=isinstance(event, SessionFinished))
        if isinstance(event, (SessionStarted, SessionFinished)) and self._in_sessions_dir():
            SessionsIndex(self.path.parent).record(self.path)

    def _in_sessions_dir(self) -> bool:
        """Whether the log is in a repo's `.git/navtui/sessions` (which has a sessions index)."""
        return self.path.parent.name == "sessions" and self.path.parent.parent.name == "navtui"

    def meta(self, **facts: Any) -> None:
        """Record facts that are not session events (e.g. `instance_id=` for a batch run)."""
        self._write({"type": "meta", **facts}, sync=True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._file is not None:
                if self._unsynced:
                    os.fsync(self._file.fileno())
                self._file.close()
                self._file = None

    def _line(self, data: dict[str, Any]) -> str:
        """One JSON line: credentials redacted in every string, then encoded so that any text
        (undecodable bytes kept as surrogates, control characters) reads back exactly and the
        file stays valid UTF-8."""
        limit = self.field_limit
        if limit is not None and self._size >= self.budget:
            limit = SMALL_FIELD_LIMIT
        logged = for_log({**data, "t": time.time()}, self._secrets, limit)
        return json_safe(json.dumps(logged, ensure_ascii=False)) + "\n"

    def _write(self, data: dict[str, Any], *, sync: bool, now: bool = False) -> None:
        """Append one line. `sync`: a step boundary, fsync'ed within SYNC_INTERVAL; `now`:
        fsync'ed at once (the end, a new file)."""
        line = self._line(data)
        with self._lock:
            if self._closed:
                return
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # (never through a link or into a FIFO: the model may have planted one)
                self._file = open(open_append(self.path), "a", encoding="utf-8", newline="\n")
                header = {"type": "writer", "pid": os.getpid(), "resumed": self._resumed}
                self._file.write(self._line(header))
                now = True
            self._file.write(line)
            self._size += len(line)
            self._file.flush()
            self._unsynced = self._unsynced or sync or now
            clock = time.monotonic()
            if self._unsynced and (now or clock - self._synced_at >= SYNC_INTERVAL):
                os.fsync(self._file.fileno())
                self._synced_at, self._unsynced = clock, False


# --- reading --------------------------------------------------------------------------------


@dataclass
class Trajectory:
    """A log read back: its events in order plus the non-event lines' facts."""

    path: Path
    events: list[Event]
    times: list[float]
    meta: dict[str, Any] = field(default_factory=dict)
    writer_pids: list[int] = field(default_factory=list)
    # Number of events read before the last `writer` line (where the latest process took over).
    last_writer_at: int = 0

    @property
    def started(self) -> SessionStarted | None:
        return next((e for e in self.events if isinstance(e, SessionStarted)), None)

    @property
    def session_id(self) -> str:
        started = self.started
        return started.session_id if started else self.path.stem

    @property
    def issue(self) -> str:
        started = self.started
        return started.issue if started else ""

    @property
    def config(self) -> dict[str, Any]:
        started = self.started
        return dict(started.config) if started else {}

    @property
    def dialect(self) -> str:
        """The dialect the session settled on: its config's, or (if "auto") its first proposal's."""
        dialect = self.config.get("dialect", "auto")
        if dialect != "auto":
            return dialect
        for event in self.events:
            if isinstance(event, StepProposed):
                return event.step.dialect
            if isinstance(event, (StepExecuted, StepRejected)):
                if event.record.origin is Origin.MODEL:
                    return event.record.proposed.dialect
        return "auto"

    @property
    def running_in(self) -> int | None:
        """The pid of a live process still writing this unfinished session, if any."""
        if self.finished is not None or not self.writer_pids:
            return None
        pid = self.writer_pids[-1]
        return pid if _alive(pid) else None

    @property
    def finished(self) -> SessionFinished | None:
        """The last SessionFinished, unless the session was resumed after it or went on with a
        message from the user (`Session.continue_with`)."""
        for i in range(len(self.events) - 1, -1, -1):
            event = self.events[i]
            if isinstance(event, SessionFinished):
                went_on = any(isinstance(e, UserMessage) for e in self.events[i + 1:])
                return event if i >= self.last_writer_at and not went_on else None
        return None


def read_trajectory(path: Path | str) -> Trajectory:
    """Read a log written by `TrajectoryWriter`; a torn final line is skipped."""
    path = Path(path)
    try:  # (no link followed, no FIFO waited on: navtui writes its logs as plain files)
        text = read_regular(path, LOG_BYTES).decode("utf-8", "surrogateescape")
    except FileNotFoundError as exc:
        raise TrajectoryError(
            f"no session log at {path}; `navtui sessions REPO` lists the sessions there"
        ) from exc
    except OSError as exc:
        raise TrajectoryError(
            f"{path} is not a session log navtui wrote ({exc.strerror or exc}): navtui reads and "
            "writes its logs as plain files, never through a link; pass the file itself"
        ) from exc
    # Split on "\n" only: str.splitlines would also cut at U+2028, U+0085 and the like.
    lines = text.removesuffix("\n").split("\n") if text else []
    trajectory = Trajectory(path=path, events=[], times=[])
    for number, line in enumerate(lines, 1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            if number == len(lines):
                break
            raise TrajectoryError(f"{path}:{number}: not a JSON line ({exc})") from exc
        kind = data.get("type")
        if kind == "writer":
            trajectory.writer_pids.append(int(data.get("pid", 0)))
            trajectory.last_writer_at = len(trajectory.events)
        elif kind == "meta":
            trajectory.meta.update({k: v for k, v in data.items() if k not in ("type", "t")})
        else:
            trajectory.events.append(event_from_dict(data))
            trajectory.times.append(float(data.get("t", 0.0)))
    return trajectory


def resume_refusal(trajectory: Trajectory, *, submitted_ok: bool = False) -> str | None:
    """Why the logged session cannot be resumed now, or None when it can (`submitted_ok`: a
    session that submitted can, to go on with a message).

    The one rule `agent_core.resume` enforces and `navtui sessions` uses for its suggestion.
    """
    if trajectory.started is None:
        return (f"{trajectory.path} has no SessionStarted line: "
                "it is not a session log navtui can resume")
    finished = trajectory.finished
    if finished is not None and finished.reason is FinishReason.SUBMITTED and not submitted_ok:
        return (f"session {trajectory.session_id} already submitted its fix; nothing to resume "
                f"(`navtui export {shlex.quote(trajectory.session_id)} --format swebench` "
                "writes its patch)")
    running = trajectory.running_in
    if running is not None and running != os.getpid():
        return (f"session {trajectory.session_id} is still running (process {running}): "
                "quit it there, or stop that process, before resuming it")
    return None


@dataclass
class SessionSummary:
    """One line of `navtui sessions REPO`."""

    id: str
    started: datetime | None
    issue: str
    steps: int
    status: str
    path: Path
    resumable: bool = False
    decisions: dict[str, int] = field(default_factory=dict)  # approved / rejected / edited
    parent: str | None = None  # a fork's: the session it was forked from, and at which step
    forked_at: int | None = None


def _facts(trajectory: Trajectory) -> dict[str, Any]:
    """What a session's line in the list needs, as kept in the sessions index."""
    live = standing_records(trajectory.events)
    executed = [r for r in live if r.checkpoint is not None]
    finished = trajectory.finished
    return {
        "id": trajectory.session_id,
        "has_start": trajectory.started is not None,
        "started": trajectory.times[0] if trajectory.times else None,
        "issue": (trajectory.issue.strip().splitlines() or [""])[0],
        "steps": len(executed),
        "finished": None if finished is None else finished.reason,
        "pid": trajectory.writer_pids[-1] if trajectory.writer_pids else None,
        "decisions": decision_counts(live),
        "parent": trajectory.meta.get(FORKED_FROM),
        "forked_at": trajectory.meta.get(FORKED_AT),
    }


def _summary(facts: dict[str, Any], path: Path) -> SessionSummary:
    """The list line. Its status: the finish reason, `running` (its writer is alive, decided now:
    it may have died since) or `interrupted` (resumable)."""
    finished, pid = facts["finished"], facts["pid"]
    running = pid if finished is None and pid and _alive(pid) else None
    status = finished or ("running" if running is not None else "interrupted")
    resumable = (
        facts["has_start"]
        and finished != FinishReason.SUBMITTED
        and (running is None or running == os.getpid())
    )
    started = facts["started"]
    return SessionSummary(
        id=facts["id"],
        started=None
        if started is None
        else datetime.fromtimestamp(started, tz=timezone.utc).astimezone(),
        issue=facts["issue"],
        steps=facts["steps"],
        status=status,
        path=path,
        resumable=bool(resumable),
        decisions=dict(facts["decisions"]),
        parent=facts.get("parent"),
        forked_at=facts.get("forked_at"),
    )


def find_trajectory(repo: Path | str, session_id: str) -> Path:
    """The log of `session_id` (a unique prefix is enough, or a path to a .jsonl file)."""
    direct = Path(session_id)
    if direct.suffix == ".jsonl" and direct.is_file():
        return direct
    folder = sessions_dir(repo_state_dir(repo))
    exact = folder / f"{session_id}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(folder.glob(f"{glob.escape(session_id)}*.jsonl")) if session_id else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(m.stem for m in matches)
        raise TrajectoryError(f"session id {session_id!r} is ambiguous ({names}); give more of it")
    raise TrajectoryError(
        f"no session {session_id!r} in {repo}; `navtui sessions {shlex.quote(str(repo))}` lists its "
        "sessions"
    )


def list_sessions(repo: Path | str) -> list[SessionSummary]:
    """Every session logged for `repo` (under its `.git/navtui`), oldest first."""
    summaries = list(iter_sessions(repo))
    return sorted(summaries, key=lambda s: (s.started is None, s.started or 0))


def iter_sessions(repo: Path | str, *, newest_first: bool = False) -> Iterator[SessionSummary]:
    """The sessions logged for `repo` one at a time, in the order of their ids (ids start with
    their UTC start time), so a list can show the first ones before the rest are read.

    Each comes from the sessions index when the index saw its log at its current size and
    mtime; otherwise the log is parsed once and the index updated (logs unreadable as session
    logs are skipped).
    """
    folder = sessions_dir(repo_state_dir(repo))
    index = SessionsIndex(folder)
    known = index.read()
    for path in sorted(folder.glob("*.jsonl"), reverse=newest_first):
        summary = index.summary(path, known.get(path.name))
        if summary is not None:
            yield summary
    index.compact(known)


class SessionsIndex:
    """`sessions/index.ndjson`: one JSON line per look at a log (its size, mtime and the facts
    `navtui sessions` shows); the latest line per log wins. A cache: anything missing, stale or
    torn is rebuilt from the log itself.
    """

    NAME = "index.ndjson"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / self.NAME
        self._lines = 0

    def read(self) -> dict[str, dict[str, Any]]:
        """Latest entry per log file name."""
        entries: dict[str, dict[str, Any]] = {}
        try:
            text = read_regular(self.path, INDEX_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return entries
        for line in text.splitlines():
            self._lines += 1
            try:
                entry = json.loads(line)
                entries[str(entry["name"])] = entry
            except (ValueError, KeyError, TypeError):
                continue
        return entries

    def summary(self, path: Path, entry: dict[str, Any] | None) -> SessionSummary | None:
        """`path`'s summary from `entry` when it is current, else from the log (then indexed)."""
        try:
            stat = path.stat()
        except OSError:
            return None
        current = entry is not None and (entry.get("size"), entry.get("mtime_ns")) == (
            stat.st_size,
            stat.st_mtime_ns,
        )
        if entry is not None and current and "decisions" in (entry.get("facts") or {}):  # older entries lack counts
            try:
                return _summary(entry["facts"], path)
            except (KeyError, TypeError, ValueError, OverflowError, OSError):
                pass
        entry = self.record(path)
        return None if entry is None else _summary(entry["facts"], path)

    def record(self, path: Path) -> dict[str, Any] | None:
        """Parse `path`, append its entry to the index and return it (None: not a session log)."""
        try:
            stat = path.stat()
            facts = _facts(read_trajectory(path))
        except (OSError, TrajectoryError, ValueError, KeyError, TypeError):
            return None
        entry = {"name": path.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "facts": facts}
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        try:
            # One O_APPEND write per line: concurrent navtui processes never interleave lines.
            append_owned(self.path, line.encode("utf-8"))
            self._lines += 1
        except OSError:
            pass  # a read-only repo: listing still works, only slower
        return entry

    def compact(self, known: dict[str, dict[str, Any]]) -> None:
        """Rewrite the index with one line per log once stale lines outnumber the live ones."""
        if self._lines <= 2 * len(known) + 64:
            return
        fresh = SessionsIndex(self.folder).read()
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in fresh.values())
        try:
            write_bytes(self.path, text.encode("utf-8"))
        except OSError:
            pass


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
