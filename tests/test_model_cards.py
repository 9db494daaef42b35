"""The prompts navtui sends the two models are their cards' own (tests/data/model-cards/)."""

from __future__ import annotations

import re
from pathlib import Path

from agent_core.prompts import build_prompt

CARDS = Path(__file__).resolve().parent / "data" / "model-cards"
ISSUE = "mean([]) raises ZeroDivisionError; it should return 0."


def r2e_card_prompt() -> str:
    """The Usage section's `prompt = \"\"\"...\"\"\"`, its example problem cut out."""
    card = (CARDS / "r2e-gym-sft-qwen3-30b-a3b.card.txt").read_text()
    (prompt,) = re.findall(r'prompt = """(.*?)"""', card, re.DOTALL)
    return prompt


def test_the_text_prompt_is_the_r2e_cards_usage_prompt():
    card = r2e_card_prompt()
    head, _, tail = card.partition("## Problem:\n")
    example = tail[: tail.index("\n\n## Your turn:")]
    assert build_prompt("text", ISSUE, []).text == card.replace(example, ISSUE)
    assert build_prompt("text", ISSUE, [], profile="card").text.startswith(head)


def test_the_card_profile_sends_the_navigator_cards_system_prompt():
    card = (CARDS / "qwen3-8b-code-navigator.card.txt").read_text()
    (system,) = re.findall(r'\{"role": "system", "content": "(.*?)"\}', card)
    messages = build_prompt("toolcall", ISSUE, [], profile="card").messages
    assert messages[0] == {"role": "system", "content": system}
    assert messages[1] == {"role": "user", "content": ISSUE}
