"""Context budget, counted with the real-vocabulary tiny Qwen tokenizer at the two seed models'
windows (r2e-30b: 4,096, text dialect; navigator-8b: 16,384, toolcall dialect)."""

from __future__ import annotations

import pytest

from agent_core import prompts
from agent_core.backends.base import Prompt
from agent_core.context import ContextOverflow, cap_text, elide_text, fit_prompt
from agent_core.prompts import Turn

ISSUE = "average([2, 4, 6]) returns 3 instead of 4; the divisor in calc/ops.py is off by one."


@pytest.fixture(scope="module")
def count(tiny_tokenizer_dir):
    """Tokens of a rendered prompt, exactly as the hf backend renders it."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)

    def count_tokens(prompt: Prompt) -> int:
        if prompt.text is not None:
            return len(tokenizer.encode(prompt.text, add_special_tokens=False))
        ids = tokenizer.apply_chat_template(
            prompt.messages, tools=prompt.tools, add_generation_prompt=True, tokenize=True,
            return_dict=False,
        )
        return len(ids)

    return count_tokens


def observation(dialect: str, step: int, lines: int) -> str:
    body = "\n".join(f"step {step} line {i}: value = compute({i}, {step})" for i in range(lines))
    return prompts.wrap(dialect, body)


def conversation(dialect: str, steps: int, lines: int) -> list[Turn]:
    from agent_core.actions import Bash
    from agent_core.formats import render

    return [
        Turn(render(Bash(f"python run.py --step {i}"), dialect, f"Check step {i}."), observation(dialect, i, lines))
        for i in range(steps)
    ]


def builder(dialect: str):
    return lambda turns: prompts.build_prompt(dialect, ISSUE, turns)


def text_of(prompt: Prompt) -> str:
    return prompt.text if prompt.text is not None else "\n".join(m["content"] for m in prompt.messages)


def test_cap_text_keeps_head_and_tail():
    text = "\n".join(f"line {i}" for i in range(1000))
    capped = cap_text(text, 400)
    assert len(capped) < 500
    assert capped.startswith("line 0\nline 1\n") and capped.endswith("line 998\nline 999")
    omitted = int(capped.split("[")[1].split(" lines omitted]")[0])
    kept = capped.count("\n")  # marker line included
    assert omitted + kept == 1000
    assert cap_text("short", 400) == "short"


def test_cap_text_cuts_one_huge_line():
    capped = cap_text("x" * 10_000, 100)
    assert len(capped) < 150 and "[1 lines omitted]" in capped


def test_elide_text_counts_lines():
    assert elide_text("a\nb\nc") == "[3 lines omitted]"


@pytest.mark.parametrize(("dialect", "window"), [("text", 4096), ("toolcall", 16_384), ("xml", 16_384)])
def test_small_conversations_are_sent_untouched(dialect, window, count):
    turns = conversation(dialect, 3, 5)
    fitted = fit_prompt(turns, builder(dialect), count, window - 1024)
    assert fitted.prompt == builder(dialect)(turns)
    assert fitted.tokens == count(fitted.prompt) and fitted.capped == fitted.elided == 0


@pytest.mark.parametrize(
    ("dialect", "window", "lines"), [("text", 4096, 20), ("toolcall", 16_384, 60), ("xml", 16_384, 60)]
)
def test_long_conversations_fit_keeping_issue_and_last_steps(dialect, window, lines, count):
    limit = window - 1024
    turns = conversation(dialect, 30, lines)
    assert count(builder(dialect)(turns)) > limit

    fitted = fit_prompt(turns, builder(dialect), count, limit)

    assert fitted.tokens == count(fitted.prompt) <= limit
    text = text_of(fitted.prompt)
    assert ISSUE in text
    for turn in turns[-2:]:
        assert turn.observation.strip() in text
    assert all(f"python run.py --step {i}" in text for i in range(30))  # every assistant turn
    assert "lines omitted]" in text
    assert "step 0 line 0:" not in text  # the oldest went first
    assert fitted.elided > 0


def test_one_huge_observation_is_cut_to_head_and_tail(count):
    turns = conversation("toolcall", 2, 5) + [Turn("ran it", observation("toolcall", 9, 5000))]
    fitted = fit_prompt(turns, builder("toolcall"), count, 4096 - 1024)
    text = text_of(fitted.prompt)
    assert fitted.tokens <= 3072 and fitted.capped >= 1
    assert "step 9 line 0:" in text and "step 9 line 4999:" in text
    assert "step 9 line 2500:" not in text and "lines omitted]" in text


def test_an_issue_too_long_for_the_window_is_refused(count):
    huge = prompts.build_prompt("text", "words " * 5000, [])
    with pytest.raises(ContextOverflow, match="only 3072 fit"):
        fit_prompt([], lambda turns: huge, count, 3072)
