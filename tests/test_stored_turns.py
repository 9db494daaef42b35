"""Each observation is stored once in the session log, and resume reads the turns back exactly."""

from __future__ import annotations

import json

from agent_core.policy import AutoPolicy
from agent_core.prompts import Turn
from agent_core.resume import load_state
from agent_core.steps import Approve, EditAction, Observation, ProposedStep, StepRecord
from agent_core.actions import Bash
from agent_core.stored_turns import store_turn, stored_turn
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from tests.test_session import make_session, write_script


def test_a_long_output_is_in_the_log_once_and_resume_reads_the_same_turns(git_repo, tmp_path):
    outputs = ["Thought: Count.\nAction: bash seq 1 3000", "Thought: Again.\nAction: bash seq 5 999"]
    session, _, _ = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    log = tmp_path / "log.jsonl"
    session.subscribe(TrajectoryWriter(log))
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    text = log.read_text()
    assert text.count(json.dumps("2998\n2999")[1:-1]) == 1  # once, not in the record and the turn
    state = load_state(read_trajectory(log))
    assert [turn for _, turn in state.turns] == [entry.turn for entry in session.state.entries]
    assert "\n2999\n3000" in state.turns[0][1].observation


def record(raw: str, output: str) -> StepRecord:
    step = ProposedStep(thought="", action=Bash("ls"), raw=raw, dialect="text")
    return StepRecord(index=1, proposed=step, decision=Approve(), observation=Observation(output))


def test_what_the_record_does_not_hold_is_stored_in_full():
    output = "\n".join(f"file{i}.py" for i in range(40))
    edited = record("Thought: x\nAction: bash ls", output)
    edited.decision = EditAction(Bash("ls -a"))
    turn = Turn("Thought: x\nAction: bash ls -a", f"(The user replaced it.)\nObservation:\n{output}")
    store_turn(edited, turn)
    assert edited.extra["turn"]["assistant"] == turn.assistant  # differs from proposed.raw
    assert "observation" not in edited.extra["turn"]
    assert stored_turn(edited) == turn

    short = record("Thought: y\nAction: bash ls", "a.py")
    store_turn(short, Turn(short.proposed.raw, "Observation:\na.py"))
    assert short.extra["turn"] == {"assistant_raw": True, "observation": "Observation:\na.py"}
    assert stored_turn(short) == Turn(short.proposed.raw, "Observation:\na.py")


def test_turns_in_logs_written_before_are_read_back():
    old = record("Thought: x\nAction: bash ls", "a.py\nb.py")
    old.extra["turn"] = {"assistant": "Thought: x\nAction: bash ls", "observation": "Observation:\nz"}
    assert stored_turn(old) == Turn("Thought: x\nAction: bash ls", "Observation:\nz")
