"""Fuzz: whatever text a model produces, `parse` raises nothing but ParseError."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.formats import DIALECTS, ParseError, parse, render

MODES = (*DIALECTS, "auto")

SEEDS = [
    render(Bash("ls -la"), "text", "look"),
    render(Edit("src/a.py", 3, 4, "    x = 1\n    return x"), "text"),
    render(Search("def f", "src/"), "text"),
    render(Read("a.py"), "text"),
    render(StrReplaceEditor("view", "a.py", view_range=[1, 9]), "toolcall", "hm"),
    render(StrReplaceEditor("insert", "a.py", insert_line=3, new_str="y"), "toolcall"),
    render(Submit(), "toolcall"),
    render(Bash("grep -rn 'x' ."), "toolcall"),
    render(StrReplaceEditor("create", "b.py", file_text="print(1)\n"), "toolcall"),
    render(StrReplaceEditor("str_replace", "a.py", old_str="a\n b", new_str="c"), "xml", "fix"),
    render(Search("needle"), "xml"),
    '<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>',
    '<think>\nplan\n</think>\n<tool_call>{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}',
]
TOKENS = [
    "<tool_call>", "</tool_call>", "<function=", "<function=bash>", "</function>", "<parameter=",
    "<parameter=command>", "<parameter=view_range>", "</parameter>", "<think>", "</think>",
    "Action:", "Thought:", "Observation:", "## Your turn", "\n", "{", "}", "[", "]", '"', "'",
    "\\", ":", ",", "edit", "bash", "search", "read", "submit", "str_replace_editor", "view",
    "insert_line", "-1", "99999999999999999999", "1e400", "NaN", "null", "true", "```", "\x00",
    "\ud800", "é", " ", "\t", "\r",
]


def mutate(rng: random.Random, text: str) -> str:
    """One random edit: insert a token, delete, duplicate or cut a slice, splice two seeds."""
    choice = rng.randrange(5)
    i = rng.randrange(len(text) + 1)
    j = rng.randrange(i, len(text) + 1)
    if choice == 0:
        return text[:i] + rng.choice(TOKENS) + text[i:]
    if choice == 1:
        return text[:i] + text[j:]
    if choice == 2:
        return text[:j] + text[i:j] + text[j:]
    if choice == 3:
        return text[:i]
    other = rng.choice(SEEDS)
    return text[:i] + other[rng.randrange(len(other) + 1):]


def fuzz_inputs(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    inputs = []
    for _ in range(count):
        text = rng.choice(SEEDS)
        for _ in range(rng.randint(1, 6)):
            text = mutate(rng, text)
        inputs.append(text)
    return inputs


def parse_or_parse_error(raw: str, mode: str) -> bool:
    """True when it parsed, False on ParseError; anything else propagates and fails the test."""
    try:
        parse(raw, mode)
    except ParseError as error:
        assert str(error).strip(), "a ParseError must carry a message for the model"
        return False
    return True


def test_12000_mutated_turns_in_every_dialect_raise_only_parse_error():
    inputs = fuzz_inputs(12_000, seed=20261130)
    outcomes = {mode: [parse_or_parse_error(raw, mode) for raw in inputs] for mode in MODES}
    for mode, parsed in outcomes.items():
        # The mutations must reach both outcomes, or the fuzz proves little.
        assert 0.01 < sum(parsed) / len(parsed) < 0.99, mode


@settings(max_examples=500, deadline=None)
@given(raw=st.lists(st.one_of(st.text(max_size=10), st.sampled_from(TOKENS)), max_size=20).map("".join))
def test_arbitrary_text_raises_only_parse_error(raw):
    for mode in MODES:
        parse_or_parse_error(raw, mode)
