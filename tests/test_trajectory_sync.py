"""How often the session log is fsync'ed: each step boundary within a second, the end at once,
and whatever is pending when it closes; flushed lines are always readable at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core import trajectory
from agent_core.events import Notice, SessionFinished
from agent_core.finish import FinishReason
from agent_core.trajectory import TrajectoryWriter, read_trajectory


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(trajectory.os, "fsync", counting)
    return calls


def test_a_burst_of_steps_costs_one_fsync_and_the_end_one_more(tmp_path: Path, fsyncs, monkeypatch):
    monkeypatch.setattr(trajectory, "SYNC_INTERVAL", 3600.0)
    path = tmp_path / "s.jsonl"
    writer = TrajectoryWriter(path)
    for n in range(50):
        writer(Notice(message=f"step {n}"))
    assert len(fsyncs) == 1  # the first line (a new file); the rest within the interval
    assert len(read_trajectory(path).events) == 50  # flushed: readable without an fsync
    writer(SessionFinished(reason=FinishReason.SUBMITTED, message="done"))
    assert len(fsyncs) == 2
    writer.close()
    assert len(fsyncs) == 2  # nothing left pending


def test_a_boundary_after_the_interval_is_synced_and_close_syncs_what_is_pending(
    tmp_path: Path, fsyncs, monkeypatch,
):
    monkeypatch.setattr(trajectory, "SYNC_INTERVAL", 0.0)
    writer = TrajectoryWriter(tmp_path / "s.jsonl")
    for n in range(3):
        writer(Notice(message=f"step {n}"))
    assert len(fsyncs) == 3
    monkeypatch.setattr(trajectory, "SYNC_INTERVAL", 3600.0)
    writer(Notice(message="pending"))
    assert len(fsyncs) == 3
    writer.close()
    assert len(fsyncs) == 4
