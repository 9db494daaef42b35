"""The `r2e-card` profile's first prompt is the R2E-Gym SFT card's Usage prompt, byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_core import prompts

CARD = Path(__file__).parent / "data" / "model-cards" / "r2e-gym-sft-qwen3-30b-a3b.card.txt"
PROBLEM = "Fix a bug in the authentication module where users cannot log in with valid credentials."


def card_prompt() -> str:
    text = CARD.read_text(encoding="utf-8")
    return re.search(r'prompt = """(.*?)"""', text, re.DOTALL).group(1)


@pytest.mark.parametrize("profile", ["r2e-card", "card"])
def test_first_prompt_is_the_cards_usage_prompt(profile: str) -> None:
    built = prompts.build_prompt("text", PROBLEM, [], profile=profile)
    assert built.text == card_prompt()
