"""Prompt pieces per dialect: shapes, observations, stop strings, and the real chat template."""

import json
import os
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


def parse_error(dialect: str, raw: str = "nothing useful") -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(raw, dialect)
    return info.value


# ---- text -----------------------------------------------------------------------------------



def test_text_prompt_lists_every_action_the_parser_reads():
    text = build_prompt("text", ISSUE, []).text
    for usage in ("bash <command>", "read <file>", "search <pattern>",
                  "edit <file> <start> <end>", "submit"):
        assert f"- {usage}:" in text


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



# ---- xml ------------------------------------------------------------------------------------



def test_xml_system_prompt_example_uses_the_syntax_the_parser_reads():
    system = build_prompt("xml", ISSUE, []).messages[0]["content"]
    start = system.index("<function=example_function_name>")
    example = system[start: system.index("</function>", start) + len("</function>")]
    # Parameters (one inline, one multi-line) are read; only the placeholder name is refused.
    with pytest.raises(ParseError, match="no function named 'example_function_name'"):
        parse(example, "xml")


# ---- observation pieces ---------------------------------------------------------------------





def test_unknown_dialect_is_refused_everywhere():
    for call in (lambda: build_prompt("json", ISSUE, []),
                 lambda: format_observation("json", Bash("x"), Observation("")),
                 lambda: format_user_message("json", "x")):
        with pytest.raises(ValueError, match="unknown dialect"):
            call()


# ---- training language (swesmith, r2e-card) ----------------------------------------------------

# SWE-agent's and SWE-smith's configs, vendored with their licenses (tests/data/README.md).
REFERENCE = Path(__file__).resolve().parent / "data" / "swe-agent"


def test_tool_schemas_equal_swe_agents_tool_configs():
    import yaml

    editor = yaml.safe_load((REFERENCE / "edit_anthropic.config.yaml").read_text())["tools"]
    submit = yaml.safe_load((REFERENCE / "review_on_submit_m.config.yaml").read_text())["tools"]
    by_name = {tool["function"]["name"]: tool["function"] for tool in TOOLS}
    assert list(by_name) == ["bash", "str_replace_editor", "submit"]
    spec = editor["str_replace_editor"]
    assert by_name["str_replace_editor"]["description"] == spec["docstring"]
    props = by_name["str_replace_editor"]["parameters"]["properties"]
    for arg in spec["arguments"]:
        assert props[arg["name"]]["description"] == arg["description"]
        assert props[arg["name"]]["type"] == arg["type"]
        assert props[arg["name"]].get("enum") == arg.get("enum")
    assert by_name["str_replace_editor"]["parameters"]["required"] == ["command", "path"]
    assert by_name["submit"]["description"] == submit["submit"]["docstring"]
    bash_doc = (REFERENCE / "commands.bash_tool.excerpt.py").read_text()
    assert f'docstring="{by_name["bash"]["description"]}"' in bash_doc
    assert f'description="{by_name["bash"]["parameters"]["properties"]["command"]["description"]}"' in bash_doc


def test_toolcall_prompt_is_swesmiths_system_and_instance_template():
    import yaml

    templates = yaml.safe_load((REFERENCE / "swesmith_gen_claude.yaml").read_text())["agent"]["templates"]
    prompt = build_prompt("toolcall", ISSUE, [])
    system, user = prompt.messages
    assert system == {"role": "system", "content": templates["system_template"]}
    expected = templates["instance_template"].replace("{{working_dir}}", "/testbed")
    assert user["content"] == expected.replace("{{problem_statement}}", ISSUE)
    assert prompt.tools == TOOLS and prompt.stop_after == ["</tool_call>"]


def test_swesmith_observations_envelope_crlf_and_no_exit_code():
    obs = format_observation("toolcall", Bash("x"), Observation("boom\nTraceback\n", exit_code=2))
    assert obs == "OBSERVATION:\nboom\r\nTraceback"
    empty = format_observation("xml", Bash("true"), Observation("", exit_code=0))
    assert empty == "Your command ran successfully and did not produce any output."


def test_swesmith_clips_long_output_with_swe_agents_note():
    body = "x" * 20_000
    obs = format_observation("toolcall", Bash("x"), Observation(body, exit_code=0, truncated=True,
                                                                 total_chars=50_000))
    assert obs == ("Observation: " + "x" * 16_000 + "<response clipped><NOTE>Observations should not "
                   "exceeded 16000 characters. 34000 characters were elided. Please try a different "
                   "command that produces less output or use head/tail/grep/redirect the output to a "
                   "file. Do not use interactive pagers.</NOTE>")


def test_real_root_is_shown_as_testbed(tmp_path):
    from agent_core.executor.paths import PathMap

    paths = PathMap(tmp_path, "/testbed")
    obs = format_observation("toolcall", Bash("pwd"), Observation(f"{tmp_path}/pkg\n", exit_code=0),
                             to_model=paths.to_model)
    assert obs == "OBSERVATION:\n/testbed/pkg"
    assert PathMap(tmp_path, "/testbed", mounted=True).to_model(f"{tmp_path}/x") == "/testbed/x"


def test_text_prompt_is_the_r2e_card_header_then_problem():
    prompt = build_prompt("text", ISSUE, [], max_new_tokens=300)
    assert prompt.text.startswith("You are an expert software engineer fixing bugs.\n\nAVAILABLE ACTIONS:\n")
    assert prompt.text.endswith(f"## Problem:\n{ISSUE}\n\n## Your turn:\nThought:")
    assert "\nObservation" in prompt.stop_before and "\n## Your turn" in prompt.stop_before
    obs = format_observation("text", Bash("x"), Observation("boom", exit_code=2))
    assert obs == "Observation:\nboom\n[exit code 2]"


def test_format_pieces_come_from_the_profile():
    assert format_parse_error("xml", parse_error("xml")).startswith("OBSERVATION:\nYour reply could not be used:")
    assert format_rejection("text", "no") == (
        "Observation:\nThe user rejected this action; it was not run. Their feedback:\nno")
    assert format_user_message("text", " hi ") == "## Message from the user:\nhi"
    assert format_user_command("xml", "ls", Observation("a\n", exit_code=0)).startswith(
        "OBSERVATION:\nThe user ran this command in the repository:\n$ ls\na")


def test_each_assistant_text_is_parsed_once_across_a_sessions_prompts(monkeypatch):
    # every prompt holds every earlier turn; parsing each once a step made a session quadratic
    from agent_core.formats import toolcall

    calls: list[str] = []
    real = toolcall.span
    monkeypatch.setattr(toolcall, "span", lambda text: calls.append(text) or real(text))
    unique = os.urandom(8).hex()  # texts no earlier test parsed
    turns = [Turn(f'<tool_call>\n{{"name": "bash", "arguments": {{"command": "echo {unique}{n}"}}}}'
                  "\n</tool_call>", f"out {n}") for n in range(30)]
    turns.append(Turn(f"no call here {unique}", "Your last output did not use any tool calls!"))
    for end in range(1, len(turns) + 1):
        prompt = build_prompt("toolcall", "fix it", turns[:end])
    assert len(calls) == len(turns)
    roles = [m["role"] for m in prompt.messages[2:]]
    assert roles == ["assistant", "tool"] * 30 + ["assistant", "user"]
