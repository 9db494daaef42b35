"""Context budget, counted with the real-vocabulary tiny Qwen tokenizer at the two seed models'
windows (r2e-30b: 4,096, text dialect; navigator-8b: 16,384, toolcall dialect)."""

from __future__ import annotations

import pytest

from agent_core import prompts
from agent_core.backends.base import Prompt
from agent_core.context import ContextFitter, ContextOverflow, cap_text, fit_prompt
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


def visible(prompt: Prompt) -> list:
    """What a KV cache sees grow: the raw text, or the list of messages."""
    return [prompt.text] if prompt.text is not None else prompt.messages


def extends(before: Prompt, after: Prompt) -> bool:
    if before.text is not None:
        return after.text.startswith(before.text)
    return after.messages[: len(before.messages)] == before.messages


def test_cap_text_keeps_head_and_tail_and_counts_the_lines_cut():
    text = "\n".join(f"line {i}" for i in range(1000))
    capped = cap_text(text, 400)
    assert len(capped) < 500
    assert capped.startswith("line 0\nline 1\n") and capped.endswith("line 998\nline 999")
    omitted = int(capped.split("[")[1].split(" lines omitted]")[0])
    kept = capped.count("\n")  # marker line included
    assert omitted + kept == 1000
    assert cap_text("short", 400) == "short"


def test_cap_text_counts_the_characters_cut_from_one_huge_line():
    capped = cap_text("x" * 10_000, 100)
    kept = capped.count("x")
    assert len(capped) < 150 and f"[{10_000 - kept} characters omitted]" in capped


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

    assert count(fitted.prompt) <= limit
    assert abs(fitted.tokens - count(fitted.prompt)) <= 4
    text = text_of(fitted.prompt)
    assert ISSUE in text
    for turn in turns[-2:]:
        assert turn.observation.strip() in text
    elided = fitted.elided
    assert elided > 0
    # The oldest steps went first, the model's replies with them, and the note counts them.
    assert "python run.py --step 0\n" not in text and "step 0 line 0:" not in text
    assert f"python run.py --step {elided - 1}" not in text
    assert f"python run.py --step {elided}" in text
    lines_cut = sum(t.assistant.count("\n") + t.observation.count("\n") + 2 for t in turns[:elided])
    assert prompts.elided_turns_note(elided, lines_cut) in text


def test_one_huge_observation_is_cut_to_head_and_tail(count):
    turns = conversation("toolcall", 2, 5) + [Turn("ran it", observation("toolcall", 9, 5000))]
    fitted = fit_prompt(turns, builder("toolcall"), count, 4096 - 1024)
    text = text_of(fitted.prompt)
    assert count(fitted.prompt) <= 3072 and fitted.capped >= 1
    assert "step 9 line 0:" in text and "step 9 line 4999:" in text
    assert "step 9 line 2500:" not in text and "lines omitted]" in text
    omitted = int(text.split("lines omitted]")[0].rsplit("[", 1)[1])
    shown = sum(f"step 9 line {i}:" in text for i in range(5000))
    assert shown + omitted == 5000


def test_an_issue_too_long_for_the_window_is_refused(count):
    huge = prompts.build_prompt("text", "words " * 5000, [])
    with pytest.raises(ContextOverflow, match="only 3072 fit"):
        fit_prompt([], lambda turns: huge, count, 3072)


class Counting:
    """The count functions a session passes, counting how often (and how much) they tokenize."""

    def __init__(self, count):
        self.count = count
        self.full_calls = 0
        self.added_calls = 0

    def full(self, prompt: Prompt) -> int:
        self.full_calls += 1
        return self.count(prompt)

    def added(self, before: Prompt, after: Prompt) -> int:
        self.added_calls += 1
        return self.count(after) - self.count(before)


@pytest.mark.parametrize(("dialect", "window"), [("text", 4096), ("toolcall", 16_384), ("xml", 16_384)])
def test_a_long_session_only_appends_between_trims_and_never_overflows(dialect, window, count):
    limit = window - 1024
    counting = Counting(count)
    fitter = ContextFitter(builder(dialect), counting.full, limit, count_added=counting.added)
    turns = conversation(dialect, 120, 25)
    previous = None
    trims = 0
    for n in range(len(turns) + 1):
        fitted = fitter.fit(turns[:n])
        assert count(fitted.prompt) <= limit
        if previous is not None and fitted.elided != previous.elided:
            trims += 1
            assert fitted.elided > previous.elided
        elif previous is not None:
            assert extends(previous.prompt, fitted.prompt), f"turn {n} rewrote the prompt"
        previous = fitted
    assert 2 <= trims <= 40
    # Each turn counted once on arrival (plus capped forms and notes at trims); whole prompts
    # only for the fixed part and once per trim.
    assert counting.full_calls <= 1 + 4 * trims
    assert counting.added_calls <= len(turns) + 12 * trims


def test_the_last_turns_stay_even_when_their_replies_are_huge(count):
    limit = 3072
    fitter = ContextFitter(builder("toolcall"), count, limit)
    turns = conversation("toolcall", 5, 5) + [Turn("x " * 5000, "done"), Turn("y " * 5000, "ok")]
    fitted = fitter.fit(turns)
    assert count(fitted.prompt) <= limit
    assert ISSUE in text_of(fitted.prompt)


def test_undo_drops_planned_turns_and_later_turns_fit_again(count):
    limit = 4096 - 1024
    fitter = ContextFitter(builder("toolcall"), count, limit)
    turns = conversation("toolcall", 60, 20)
    trimmed = fitter.fit(turns)
    assert trimmed.elided > 0
    short = fitter.fit(turns[:3])  # undo to before the cut: planned from scratch
    assert short.elided == 0 and short.prompt == builder("toolcall")(turns[:3])
    other = turns[:3] + conversation("xml", 10, 20)
    again = fitter.fit(other)
    assert count(again.prompt) <= limit
    assert other[-1].observation in text_of(again.prompt)
