"""Real models' tool-call habits: untagged calls, schema keys copied into arguments, unclosed calls.

The shapes are the ones Qwen2.5-Coder-0.5B-Instruct wrote through navtui (issue 14).
"""

import random

import pytest

from agent_core.actions import Bash, Search, StrReplaceEditor
from agent_core.formats import DIALECTS, ParseError, detect_dialect, get_dialect, parse
from tests.test_formats_fuzz import mutate

GREP = '{"name": "bash", "arguments": {"command": "grep -rn \\"def parse\\" ."}}'


def test_bare_untagged_call_is_accepted_with_a_notice():
    step = parse(GREP, "toolcall")
    assert step.action == Bash('grep -rn "def parse" .')
    assert "untagged tool call accepted" in step.notice
    assert step.thought == ""


@pytest.mark.parametrize("fence", ["```json", "```"])
def test_untagged_call_in_a_fence_keeps_the_text_before_it_as_thought(fence):
    raw = f"I will look for the parser.\n{fence}\n{GREP}\n```\n"
    step = parse(raw, "toolcall")
    assert step.action == Bash('grep -rn "def parse" .')
    assert step.thought == "I will look for the parser."
    assert "untagged tool call accepted" in step.notice


def test_keys_copied_from_the_schema_are_dropped_with_a_notice():
    raw = '{"name": "bash", "arguments": {"command": "ls", "required": []}}'
    step = parse(raw, "toolcall")
    assert step.action == Bash("ls")
    assert "no parameter(s) required; they were ignored" in step.notice
    tagged = parse(f"<tool_call>\n{raw}\n</tool_call>", "toolcall")
    assert tagged.action == Bash("ls")
    assert "untagged" not in tagged.notice and "required" in tagged.notice


def test_editor_schema_keys_are_dropped_but_wrong_types_stay_errors():
    raw = (
        '{"name": "str_replace_editor", "arguments": {"command": "view", "path": "a.py", '
        '"type": "object", "view_range": [1, 5]}}'
    )
    step = parse(raw, "toolcall")
    assert step.action == StrReplaceEditor("view", "a.py", view_range=[1, 5])
    assert "type" in step.notice
    wrong = raw.replace("[1, 5]", '"lines one to five"')
    with pytest.raises(ParseError, match="two integers"):
        parse(wrong, "toolcall")


def test_tool_named_after_the_issue_function_lists_the_real_tools():
    with pytest.raises(ParseError) as info:
        parse('{"name": "add", "arguments": {"a": 2, "b": 3}}', "toolcall")
    assert "no tool named 'add'" in info.value.problem
    assert "bash, str_replace_editor, submit" in info.value.problem


def test_two_untagged_candidates_are_refused_not_guessed():
    raw = GREP + "\nor maybe\n" + '{"name": "bash", "arguments": {"command": "ls"}}'
    with pytest.raises(ParseError, match="2 tool calls without <tool_call> tags"):
        parse(raw, "toolcall")


def test_a_tagged_call_wins_over_untagged_json_in_the_thought():
    raw = "I could run " + GREP + " but\n<tool_call>\n" + '{"name": "submit", "arguments": {}}' + (
        "\n</tool_call>"
    )
    step = parse(raw, "toolcall")
    assert step.action.kind == "submit"
    assert step.notice is None


def test_json_that_is_not_a_call_is_still_no_tool_call():
    with pytest.raises(ParseError, match="No tool call found"):
        parse('The config is {"name": "demo", "version": 2}.', "toolcall")


def test_untagged_calls_do_not_make_auto_detection_guess():
    assert detect_dialect(GREP) is None
    with pytest.raises(ParseError):
        parse(GREP, "auto")


def test_xml_call_without_closing_tag_at_the_end_runs_with_a_notice():
    step = parse("Look.\n<function=bash>\n<parameter=command>ls -la</parameter>\n", "xml")
    assert step.action == Bash("ls -la")
    assert "no closing </function>" in step.notice


def test_xml_unknown_parameters_are_dropped_with_a_notice():
    raw = (
        "<function=search>\n<parameter=search_term>def parse</parameter>\n"
        "<parameter=required>[]</parameter>\n</function>"
    )
    step = parse(raw, "xml")
    assert step.action == Search("def parse")
    assert "search has no parameter(s) required" in step.notice


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_shape_shown_in_errors_is_not_a_runnable_reply(dialect):
    example = get_dialect(dialect).example
    with pytest.raises(ParseError):
        parse(example, dialect)


def test_fuzzed_untagged_replies_raise_only_parse_errors():
    rng = random.Random(14)
    seeds = [GREP, f"```json\n{GREP}\n```", '{"arguments": {"command": "ls"}, "name": "bash"}']
    for _ in range(3000):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 5)):
            text = mutate(rng, text)
        for dialect in (*DIALECTS, "auto"):
            try:
                parse(text, dialect)
            except ParseError:
                pass
