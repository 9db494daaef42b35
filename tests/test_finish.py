"""One table of finish reasons: exit codes, predictions and how logs read them back."""

from __future__ import annotations

import json

from agent_core.events import SessionFinished
from agent_core.finish import FinishReason
from agent_core.trajectory import TrajectoryWriter, read_trajectory


def test_every_reason_has_its_exit_code():
    codes = {reason.value: reason.exit_code for reason in FinishReason}
    assert codes == {
        "submitted": 0, "error": 1, "limit": 2, "script_exhausted": 2, "format_errors": 2,
        "stuck": 2, "server_unavailable": 2, "quit": 3,
    }
    assert {r for r in FinishReason if r.has_prediction} == {
        FinishReason.SUBMITTED, FinishReason.LIMIT, FinishReason.SCRIPT_EXHAUSTED,
        FinishReason.FORMAT_ERRORS, FinishReason.STUCK,
    }


def test_a_logged_reason_reads_back_typed_and_an_unknown_one_as_an_error(tmp_path):
    log = tmp_path / "log.jsonl"
    writer = TrajectoryWriter(log)
    writer(SessionFinished(FinishReason.SERVER_UNAVAILABLE, "gone"))
    writer.close()
    assert json.loads(log.read_text().splitlines()[-1])["reason"] == "server_unavailable"
    finished = read_trajectory(log).finished
    assert finished.reason is FinishReason.SERVER_UNAVAILABLE and finished.reason.exit_code == 2

    line = json.loads(log.read_text().splitlines()[-1])
    line["reason"] = "a_reason_from_elsewhere"
    log.write_text(log.read_text() + json.dumps(line) + "\n")
    assert read_trajectory(log).finished.reason is FinishReason.ERROR
