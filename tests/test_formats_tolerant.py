"""Real models' tool-call habits: untagged calls, schema keys copied into arguments, unclosed calls.

The shapes are the ones Qwen2.5-Coder-0.5B-Instruct wrote through navtui (issue 14).
"""

import random
import re

import pytest

from agent_core.actions import Bash, Search, StrReplaceEditor
from agent_core.formats import DIALECTS, ParseError, detect_dialect, get_dialect, parse
from agent_core.formats.examples import build_example
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


def test_auto_reads_one_untagged_call_as_toolcall_and_guesses_nothing_else():
    assert detect_dialect(GREP) == "toolcall"
    assert parse(f"```json\n{GREP}\n```", "auto").action == Bash('grep -rn "def parse" .')
    assert detect_dialect(GREP + "\n" + GREP) is None  # two candidates
    assert detect_dialect('{"name": "add", "arguments": {"a": 1}}') is None  # not a tool
    assert detect_dialect("Thought: x\nAction: bash ls\n" + GREP) == "text"  # a tagged action wins
    with pytest.raises(ParseError):
        parse(GREP + "\n" + GREP, "auto")


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
def test_the_example_shown_in_errors_is_a_complete_reply_without_placeholders(dialect):
    """Qwen2.5-Coder-0.5B copied `TOOL_NAME` from the shape errors used to show: the example is
    a real reply now, one that parses to a harmless action and names the real tools."""
    example = build_example(get_dialect(dialect).render, get_dialect(dialect).tools)
    assert get_dialect(dialect).example == example.text
    assert parse(example.reply, dialect).action in (
        StrReplaceEditor(command="view", path="/testbed"), Bash("ls /testbed"))
    assert not re.search(r"\b[A-Z]{2,}(?:_[A-Z]+)*\b", example.text.replace("/testbed", ""))
    assert all(kind in example.tools for kind in get_dialect(dialect).kinds)


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


def test_a_real_model_shaped_untagged_reply_executes_end_to_end(git_repo, tmp_path):
    """Qwen2.5-Coder's habit, through `navtui --auto`: a fenced untagged call with a schema key."""
    import json

    from tests.test_cli import ISSUE, navtui
    from tests.test_session import write_script

    replies = [
        'Let me find the function.\n```json\n{"name": "bash", "arguments": '
        '{"command": "grep -rn \\"def average\\" .", "required": []}}\n```',
        '{"name": "submit", "arguments": {}}',
    ]
    script = write_script(tmp_path / "s.jsonl", replies)
    result = navtui("--auto", "--json", "--script", str(script), "--dialect", "toolcall",
                    "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    proposed = [e for e in events if e["type"] == "StepProposed"]
    assert "untagged tool call accepted" in proposed[0]["step"]["notice"]
    executed = [e for e in events if e["type"] == "StepExecuted"]
    assert executed[0]["record"]["action"] == {"kind": "bash", "command": 'grep -rn "def average" .'}
    assert "def average" in executed[0]["record"]["observation"]["output"]
    assert "untagged tool call accepted" in json.dumps(executed[0]["record"]["extra"]["turn"])
    assert events[-1]["reason"] == "submitted"


def test_the_auto_refusal_shows_one_real_action_in_each_format():
    from agent_core.formats import ambiguity

    message = ambiguity("I am thinking.")
    assert "TOOL_NAME" not in message and "FUNCTION_NAME" not in message
    assert "Action: bash ls (text)" in message
    for dialect in ("toolcall", "xml"):
        assert parse(message, dialect).action == Bash("ls")
    with pytest.raises(ParseError, match="mixes formats"):
        parse(message, "auto")
