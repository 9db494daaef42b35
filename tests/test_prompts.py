"""Prompt pieces per dialect: shapes, observations, stop strings, and the real chat template."""

import json
from pathlib import Path

import pytest

from agent_core.actions import STR_REPLACE_EDITOR_COMMANDS, Bash, Read, StrReplaceEditor, Submit
from agent_core.formats import ParseError, parse, render
from agent_core.formats.common import EDITOR_PARAMS
from agent_core.prompts import (
    TOOLS,
    Turn,
    build_prompt,
    format_observation,
    format_parse_error,
    format_rejection,
    format_user_command,
    format_user_message,
)
from agent_core.steps import Observation

ISSUE = "mean([]) raises ZeroDivisionError; it should return 0."
QWEN3_TEMPLATE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "qwen3_chat_template.jinja"


def parse_error(dialect: str, raw: str = "nothing useful") -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, dialect)
    return info.value


# ---- text -----------------------------------------------------------------------------------


def test_text_prompt_is_the_seed_shape_ending_in_thought():
    prompt = build_prompt("text", ISSUE, [], max_new_tokens=300)
    assert prompt.text.startswith("You are an expert software engineer fixing bugs.\n")
    assert "AVAILABLE ACTIONS:" in prompt.text
    assert f"## Problem:\n{ISSUE}\n\n## Your turn:\nThought:" in prompt.text
    assert prompt.text.endswith("## Your turn:\nThought:")
    assert prompt.messages is None and prompt.tools is None
    assert prompt.max_new_tokens == 300
    assert "\nObservation:" in prompt.stop_before and prompt.stop_after == []


def test_text_prompt_lists_every_action_the_parser_reads():
    text = build_prompt("text", ISSUE, []).text
    for usage in ("bash <command>", "read <file>", "search <pattern> [path]",
                  "edit <file> <start> <end>", "submit"):
        assert f"- {usage}" in text


def test_text_turns_append_so_each_prompt_extends_the_last():
    replies = [" The mean is in stats.py.\nAction: read stats.py",
               "Thought: Guard the empty case.\nAction: edit stats.py 2 2\n    return 0 if not xs else sum(xs) / len(xs)"]
    observations = [
        format_observation("text", Read("stats.py"), Observation("1\tdef mean(xs):\n2\t    return sum(xs) / len(xs)\n", 0)),
        format_observation("text", parse(replies[1], "text").action, Observation("edited", 0)),
    ]
    turns = [Turn(r, o) for r, o in zip(replies, observations)]
    first = build_prompt("text", ISSUE, turns[:1]).text
    both = build_prompt("text", ISSUE, turns).text
    assert both.startswith(build_prompt("text", ISSUE, []).text + " The mean is in stats.py.")
    assert both.startswith(first)
    assert "## Your turn:\nThought: Guard the empty case.\nAction: edit stats.py 2 2\n" in both
    assert "Thought: Thought:" not in both
    assert "Observation:\n1\tdef mean(xs):" in both
    assert both.endswith("Observation:\nedited\n\n## Your turn:\nThought:")


def test_text_fixed_prompt_is_compact_in_real_qwen_tokens(tiny_tokenizer_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    fixed = build_prompt("text", "", []).text
    assert len(tokenizer(fixed)["input_ids"]) < 250, "r2e-30b has a 4,096-token window"


# ---- toolcall -------------------------------------------------------------------------------


def test_toolcall_messages_and_tools():
    call = render(Bash("python -m pytest -q"), "toolcall", "Run the tests.")
    turns = [
        Turn(call, format_observation("toolcall", Bash("x"), Observation("1 failed", 1))),
        Turn("I think it is fixed.", format_parse_error("toolcall", parse_error("toolcall"))),
        Turn("", format_user_message("toolcall", "Please also add a test.")),
    ]
    prompt = build_prompt("toolcall", ISSUE, turns)
    assert prompt.text is None and prompt.tools is TOOLS
    assert prompt.stop_after == ["</tool_call>"]
    roles = [m["role"] for m in prompt.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "user"]
    assert prompt.messages[0]["content"] == (
        "You are an expert software engineer that navigates code repositories using bash commands."
    )
    assert prompt.messages[1]["content"] == ISSUE
    assert prompt.messages[2]["content"] == call
    assert prompt.messages[3]["content"] == "1 failed\n[exit code 1]"
    assert "No tool call found" in prompt.messages[5]["content"]
    assert prompt.messages[6]["content"] == "Please also add a test."


def test_tools_schema_matches_what_the_parser_reads():
    by_name = {tool["function"]["name"]: tool["function"] for tool in TOOLS}
    assert set(by_name) == {"bash", "str_replace_editor", "submit"}
    editor = by_name["str_replace_editor"]["parameters"]
    assert tuple(editor["properties"]) == EDITOR_PARAMS
    assert editor["properties"]["command"]["enum"] == list(STR_REPLACE_EDITOR_COMMANDS)
    assert editor["required"] == ["command", "path"]
    assert by_name["bash"]["parameters"]["required"] == ["command"]
    for action in (Bash("ls"), StrReplaceEditor("view", "a", view_range=[1, 2]),
                   StrReplaceEditor("insert", "a", insert_line=1, new_str="x"), Submit()):
        payload = json.loads(render(action, "toolcall").split("\n")[1])
        params = by_name[payload["name"]]["parameters"]
        assert set(payload["arguments"]) <= set(params["properties"])
        assert set(params["required"]) <= set(payload["arguments"])


@pytest.mark.parametrize("source", ["qwen3 reference", "fixture"])
def test_toolcall_prompt_renders_with_the_qwen3_chat_template(source, tiny_tokenizer_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    template = None
    if source == "qwen3 reference":
        if not QWEN3_TEMPLATE.is_file():
            pytest.skip(f"Qwen3 reference template not found at {QWEN3_TEMPLATE}")
        template = QWEN3_TEMPLATE.read_text()
    call = render(StrReplaceEditor("view", "stats.py"), "toolcall")
    turns = [Turn(call, format_observation("toolcall", Read("x"), Observation("def mean(xs): ...", 0)))]
    prompt = build_prompt("toolcall", ISSUE, turns)
    text = tokenizer.apply_chat_template(
        prompt.messages, tools=prompt.tools, chat_template=template, tokenize=False,
        add_generation_prompt=True,
    )
    assert '"name": "str_replace_editor"' in text.split("\n</tools>")[0]
    assert f"<|im_start|>assistant\n{call}<|im_end|>" in text
    assert "<tool_response>\ndef mean(xs): ...\n</tool_response>" in text
    assert text.endswith("<|im_start|>assistant\n")


# ---- xml ------------------------------------------------------------------------------------


def test_xml_prompt_has_the_function_list_and_observation_messages():
    call = render(Bash("ls"), "xml", "Look around.")
    turns = [
        Turn(call, format_observation("xml", Bash("ls"), Observation("", 0))),
        Turn("", format_user_command("xml", "git status", Observation("clean", 0))),
        Turn(render(Submit(), "xml"), format_rejection("xml", "not yet: run the tests")),
    ]
    prompt = build_prompt("xml", ISSUE, turns, repo_path="/repo")
    system = prompt.messages[0]["content"]
    for number, name in enumerate(("bash", "submit", "str_replace_editor"), start=1):
        assert f"---- BEGIN FUNCTION #{number}: {name} ----" in system
        assert f"---- END FUNCTION #{number} ----" in system
    assert "<function=" in system and "</function>" in system
    task = prompt.messages[1]["content"]
    assert task.startswith("<uploaded_files>\n/repo\n</uploaded_files>")
    assert f"<pr_description>\n{ISSUE}\n</pr_description>" in task
    roles = [m["role"] for m in prompt.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    assert prompt.messages[3]["content"] == (
        "OBSERVATION:\nYour command ran successfully and did not produce any output.\n\n"
        "OBSERVATION:\nThe user ran this command in the repository:\n$ git status\nclean"
    )
    assert prompt.messages[5]["content"] == (
        "OBSERVATION:\nThe user rejected this action; it was not run. Their feedback:\n"
        "not yet: run the tests"
    )
    assert prompt.stop_after == ["</function>"]


def test_xml_system_prompt_example_uses_the_syntax_the_parser_reads():
    system = build_prompt("xml", ISSUE, []).messages[0]["content"]
    start = system.index("<function=example_function_name>")
    example = system[start: system.index("</function>", start) + len("</function>")]
    # Parameters (one inline, one multi-line) are read; only the placeholder name is refused.
    with pytest.raises(ParseError, match="no function named 'example_function_name'"):
        parse(example, "xml")


# ---- observation pieces ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "dialect, expected",
    [
        ("text", "Observation:\nboom\nTraceback\n[exit code 2]"),
        ("toolcall", "boom\nTraceback\n[exit code 2]"),
        ("xml", "OBSERVATION:\nboom\nTraceback"),
    ],
)
def test_observation_shape_per_dialect(dialect, expected):
    observation = Observation(output="boom\n", exit_code=2, error="Traceback")
    assert format_observation(dialect, Bash("x"), observation) == expected


def test_empty_output_and_the_extra_actions_notice():
    notice = parse("Action: bash ls\nAction: bash pwd", "text").notice
    text = format_observation("text", Read("a.py"), Observation("", 0), notice=notice)
    assert text == f"Observation:\n(no output)\n\n{notice}"
    assert format_observation("toolcall", Bash("true"), Observation("", 0)) == (
        "Your command ran successfully and did not produce any output."
    )


def test_parse_error_rejection_and_user_pieces():
    error = parse_error("text")
    assert format_parse_error("text", error) == f"Observation:\nYour reply could not be used: {error}"
    assert "Action:" in format_parse_error("text", error)
    assert format_rejection("toolcall", "") == "The user rejected this action; it was not run."
    assert format_rejection("text", " use pytest ") == (
        "Observation:\nThe user rejected this action; it was not run. Their feedback:\nuse pytest"
    )
    assert format_user_message("text", "hi") == "## Message from the user:\nhi"
    assert format_user_message("xml", "hi") == "hi"
    assert format_user_command("toolcall", "ls", Observation("a\n", 1)) == (
        "The user ran this command in the repository:\n$ ls\na\n[exit code 1]"
    )


def test_unknown_dialect_is_refused_everywhere():
    for call in (lambda: build_prompt("json", ISSUE, []),
                 lambda: format_observation("json", Bash("x"), Observation("")),
                 lambda: format_user_message("json", "x")):
        with pytest.raises(ValueError, match="unknown dialect"):
            call()
