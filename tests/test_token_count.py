"""Backends count what a turn adds to a prompt exactly, encoding only the added text."""

from __future__ import annotations

import pytest

from agent_core import prompts
from agent_core.backends.hf import HFBackend
from agent_core.prompts import Turn

ISSUE = "average([2, 4, 6]) returns 3 instead of 4."


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    loaded = HFBackend(str(tiny_model_dir), device_map=None)
    yield loaded
    loaded.close()


TURNS = {
    "toolcall": Turn(
        'Look.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
        "calc/\nREADME.md\n  indented ünïcode line\n",
    ),
    "xml": Turn("Look.\n<function=bash>\n<parameter=command>ls</parameter>\n</function>", "OBSERVATION:\ncalc/"),
    "text": Turn("Thought: look\nAction: bash ls", "Observation:\ncalc/\nREADME.md"),
}


@pytest.mark.parametrize("dialect", ["toolcall", "xml", "text"])
def test_added_tokens_match_the_whole_prompts_difference(backend, dialect):
    history = [TURNS[dialect]] * 3
    before = prompts.build_prompt(dialect, ISSUE, history)
    for turn in (TURNS[dialect], Turn("", "a message from the user")):
        after = prompts.build_prompt(dialect, ISSUE, [*history, turn])
        expected = backend.count_tokens(after) - backend.count_tokens(before)
        assert backend.count_added_tokens(before, after) == expected > 0
