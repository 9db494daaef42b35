"""Every assistant turn of real SWE-smith training conversations parses in the xml dialect.

The corpus is vendored in `tests/data/swe-smith/` (source and MIT license beside it).
"""

import json
import re
from pathlib import Path

import pytest

from agent_core.actions import action_to_dict
from agent_core.formats import detect_dialect, parse
from agent_core.prompts import build_prompt

CORPUS = Path(__file__).resolve().parent / "data" / "swe-smith" / "swesmith_xml_conversations.jsonl"

KIND_OF = {"bash": "bash", "str_replace_editor": "str_replace_editor", "submit": "submit"}


def assistant_turns() -> list[tuple[str, int, str]]:
    turns = []
    for line in CORPUS.read_text().splitlines():
        record = json.loads(line)
        for index, message in enumerate(record["messages"]):
            if message["role"] == "assistant":
                turns.append((record["instance_id"], index, message["content"]))
    return turns


TURNS = assistant_turns()


def expected(raw: str) -> dict:
    """An independent reading of the call: regexes over the raw text, SWE-smith's conventions."""
    (name,) = re.findall(r"<function=([\w-]+)>", raw)
    params = {}
    for key, value in re.findall(r"<parameter=(\w+)>(.*?)</parameter>", raw, re.DOTALL):
        value = value[1:] if value.startswith("\n") else value
        params[key] = value[:-1] if value.endswith("\n") else value
    if "view_range" in params:
        params["view_range"] = json.loads(params["view_range"])
    if "insert_line" in params:
        params["insert_line"] = int(params["insert_line"])
    return {"kind": KIND_OF[name], **params}


def test_corpus_is_the_real_training_set():
    assert len({instance for instance, _, _ in TURNS}) == 3
    assert len(TURNS) >= 90


@pytest.mark.parametrize("instance, index, raw", TURNS, ids=[f"{i}-{n}" for i, n, _ in TURNS])
def test_assistant_turn_parses_to_the_right_action(instance, index, raw):
    step = parse(raw, "xml")
    assert action_to_dict(step.action) == expected(raw)
    assert step.thought == raw[: raw.index("<function=")].strip()
    assert step.notice is None
    assert detect_dialect(raw) == "xml"


def test_every_kind_and_editor_command_is_covered():
    kinds = {parse(raw, "xml").action.kind for _, _, raw in TURNS}
    commands = {
        step.action.command
        for step in (parse(raw, "xml") for _, _, raw in TURNS)
        if step.action.kind == "str_replace_editor"
    }
    assert kinds == {"bash", "str_replace_editor", "submit"}
    assert {"view", "create", "str_replace"} <= commands


def test_xml_system_prompt_is_the_corpus_system_message():
    records = [json.loads(line) for line in CORPUS.read_text().splitlines()]
    (system,) = {record["messages"][0]["content"] for record in records}
    assert build_prompt("xml", "an issue", []).messages[0] == {"role": "system", "content": system}
