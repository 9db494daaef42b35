"""The sessions index: listing reads a log only when it changed since the index saw it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_core.events import SessionFinished, SessionStarted
from agent_core.trajectory import (
    SessionsIndex,
    TrajectoryWriter,
    default_path,
    iter_sessions,
    list_sessions,
    repo_state_dir,
)
from tests.test_trajectory import _executed


def write_session(repo: Path, session_id: str, steps: int, reason: str | None = "submitted") -> Path:
    path = default_path(repo_state_dir(repo), session_id)
    writer = TrajectoryWriter(path)
    writer(SessionStarted(session_id, f"issue of {session_id}", {}))
    for index in range(1, steps + 1):
        writer(_executed(index))
    if reason:
        writer(SessionFinished(reason, "done"))
    writer.close()
    return path


def index_names(repo: Path) -> list[str]:
    path = default_path(repo_state_dir(repo), "x").parent / SessionsIndex.NAME
    return [json.loads(line)["name"] for line in path.read_text().splitlines()]


def test_a_finished_session_is_listed_from_the_index_until_its_log_changes(git_repo: Path):
    log = write_session(git_repo, "20260101-000000-aaaaaa", steps=2)
    assert index_names(git_repo) == [log.name] * 2  # written at start and at finish

    # Same size and mtime, different bytes: the listing must come from the index.
    stat, original = log.stat(), log.read_bytes()
    log.write_bytes(b"x" * stat.st_size)
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    [listed] = list_sessions(git_repo)
    assert (listed.steps, listed.status, listed.issue) == (2, "submitted", "issue of 20260101-000000-aaaaaa")

    # A log that changed is read again: here this process resumed it and ran a third step.
    log.write_bytes(original)
    writer = TrajectoryWriter(log, resumed=True)
    writer(_executed(3))
    writer.close()
    [listed] = list_sessions(git_repo)
    assert (listed.steps, listed.status) == (3, "running")


def test_logs_missing_from_the_index_are_parsed_once_then_indexed(git_repo: Path):
    write_session(git_repo, "20260101-000000-aaaaaa", steps=1)
    write_session(git_repo, "20260102-000000-bbbbbb", steps=3, reason=None)
    index = default_path(repo_state_dir(git_repo), "x").parent / SessionsIndex.NAME
    index.unlink()  # as if written by a navtui without the index
    sessions = list_sessions(git_repo)
    assert [(s.steps, s.status) for s in sessions] == [(1, "submitted"), (3, "running")]  # its writer: us
    assert sorted(index_names(git_repo)) == ["20260101-000000-aaaaaa.jsonl", "20260102-000000-bbbbbb.jsonl"]
    assert list_sessions(git_repo) == sessions
    assert len(index_names(git_repo)) == 2  # nothing re-read the second time


def test_sessions_come_one_at_a_time_newest_first(git_repo: Path):
    ids = [f"2026010{i}-000000-abcdef" for i in range(1, 6)]
    for session_id in ids:
        write_session(git_repo, session_id, steps=1)
    index = default_path(repo_state_dir(git_repo), "x").parent / SessionsIndex.NAME
    index.unlink()
    listing = iter_sessions(git_repo, newest_first=True)
    first = next(listing)
    assert first.id == ids[-1]
    assert index_names(git_repo) == [f"{ids[-1]}.jsonl"]  # the others not read yet
    assert [s.id for s in listing] == ids[-2::-1]


def test_a_torn_index_line_is_ignored_and_stale_lines_are_compacted(git_repo: Path):
    log = write_session(git_repo, "20260101-000000-aaaaaa", steps=1)
    index = log.parent / SessionsIndex.NAME
    with index.open("a") as handle:
        for _ in range(200):
            handle.write(json.dumps({"name": log.name, "size": 1, "mtime_ns": 1, "facts": {}}) + "\n")
        handle.write('{"name": "torn')
    [listed] = list_sessions(git_repo)
    assert listed.steps == 1
    assert index_names(git_repo) == [log.name]
