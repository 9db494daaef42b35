"""The replay backend: scripted turns streamed in chunks, clear errors, cancel mid-turn."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from agent_core.backends.base import Backend, BackendError, Prompt
from agent_core.backends.replay import ReplayBackend, ScriptExhausted

TURN_1 = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
TURN_2 = "Thought: fix it\nAction: submit"
PROMPT = Prompt(messages=[{"role": "user", "content": "fix the bug in calc/ops.py"}])


def write_script(path: Path, outputs: list[str], extra: str = "") -> Path:
    path.write_text("".join(json.dumps({"output": o}) + "\n" for o in outputs) + extra)
    return path


def test_streams_each_turn_in_chunks_then_reports_exhaustion(tmp_path: Path) -> None:
    backend = ReplayBackend(write_script(tmp_path / "s.jsonl", [TURN_1, TURN_2]), chunk_size=5)
    assert isinstance(backend, Backend)
    chunks = list(backend.stream(PROMPT))
    assert "".join(chunks) == TURN_1
    assert len(chunks) == -(-len(TURN_1) // 5)
    assert all(len(c) <= 5 for c in chunks)
    assert backend.last_usage is not None
    assert backend.last_usage.new_tokens > 0 and backend.last_usage.prompt_tokens > 0
    assert "".join(backend.stream(PROMPT)) == TURN_2
    assert backend.turns_left == 0
    with pytest.raises(ScriptExhausted, match=r"s\.jsonl exhausted: all 2 turns"):
        list(backend.stream(PROMPT))


def test_blank_lines_and_extra_fields_are_accepted(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text(
        "\n" + json.dumps({"output": TURN_2, "usage": {"new_tokens": 3}}) + "\n\n"
    )
    backend = ReplayBackend(script)
    assert backend.turns_left == 1
    assert "".join(backend.stream(PROMPT)) == TURN_2


def test_exhausted_is_a_backend_error() -> None:
    assert issubclass(ScriptExhausted, BackendError)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", r"s\.jsonl:2: not valid JSON"),
        ('["output"]', r's\.jsonl:2: expected an object with a string "output"'),
        ('{"output": 3}', r's\.jsonl:2: expected an object with a string "output"'),
        ('{"text": "hi"}', r's\.jsonl:2: expected an object with a string "output"'),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, expected: str) -> None:
    script = write_script(tmp_path / "s.jsonl", [TURN_1], extra=line + "\n")
    with pytest.raises(BackendError, match=expected):
        ReplayBackend(script)


def test_missing_script_says_which_path(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"replay script not found: .*nope\.jsonl"):
        ReplayBackend(tmp_path / "nope.jsonl")


def test_delay_paces_the_chunks(tmp_path: Path) -> None:
    backend = ReplayBackend(write_script(tmp_path / "s.jsonl", ["abcdef"]), chunk_size=2,
                            delay=0.05)
    arrivals = []
    for _ in backend.stream(PROMPT):
        arrivals.append(time.monotonic())
    assert len(arrivals) == 3
    assert arrivals[-1] - arrivals[0] >= 0.09
    assert backend.last_usage is not None and backend.last_usage.time_to_first_token >= 0.04


def test_cancel_from_another_thread_stops_mid_turn(tmp_path: Path) -> None:
    output = "x" * 400
    backend = ReplayBackend(write_script(tmp_path / "s.jsonl", [output, TURN_2]), chunk_size=4,
                            delay=0.02)
    received: list[str] = []
    for chunk in backend.stream(PROMPT):
        received.append(chunk)
        if len(received) == 3:
            threading.Thread(target=backend.cancel).start()
    assert 3 <= len(received) < 10
    assert "".join(received) == output[: 4 * len(received)]
    assert "".join(backend.stream(PROMPT)) == TURN_2


def test_bad_chunk_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="chunk_size"):
        ReplayBackend(write_script(tmp_path / "s.jsonl", [TURN_1]), chunk_size=0)


def test_skip_moves_past_used_turns_without_streaming_them(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [TURN_1, TURN_2, "Thought: last\nAction: submit"])
    backend = ReplayBackend(script, delay=60.0)  # streaming a skipped turn would take minutes
    backend.skip(2)
    assert backend.turns_left == 1 and backend.last_usage is None
    backend.delay = 0.0
    assert "".join(backend.stream(PROMPT)) == "Thought: last\nAction: submit"
    backend.skip(5)
    with pytest.raises(ScriptExhausted):
        next(backend.stream(PROMPT))
