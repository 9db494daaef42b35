"""The toolcall dialect: Qwen3 `<tool_call>{json}</tool_call>` turns."""

import json

import pytest

from agent_core.actions import Bash, StrReplaceEditor, Submit
from agent_core.formats import ParseError, get_dialect, parse, render
from agent_core.formats.examples import EXAMPLE_HEADER
from agent_core.formats import toolcall


def call(name, arguments):
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_think_block_and_text_before_the_call_make_the_thought():
    raw = "<think>\nThe test imports utils.\n</think>\n\nLet me check it.\n" + call(
        "bash", {"command": "cat utils.py"}
    )
    step = parse(raw, "toolcall")
    assert step.thought == "The test imports utils.\n\nLet me check it."
    assert step.action == Bash(command="cat utils.py")
    assert step.raw == raw and step.dialect == "toolcall"


def test_closing_think_alone_when_the_template_opened_the_block():
    step = parse("planning\n</think>\n" + call("submit", {}), "toolcall")
    assert step.thought == "planning"
    assert step.action == Submit()


def test_editor_arguments_keep_types_and_whitespace():
    args = {"command": "str_replace", "path": "/testbed/a.py", "old_str": "    x = 1\n", "new_str": "    x = 2\n"}
    assert parse(call("str_replace_editor", args), "toolcall").action == StrReplaceEditor(
        command="str_replace", path="/testbed/a.py", old_str="    x = 1\n", new_str="    x = 2\n"
    )


def test_view_range_and_insert_line_given_as_strings_are_converted():
    args = {"command": "view", "path": "a.py", "view_range": "[3, -1]"}
    assert parse(call("str_replace_editor", args), "toolcall").action.view_range == [3, -1]
    args = {"command": "insert", "path": "a.py", "insert_line": "7", "new_str": "x"}
    assert parse(call("str_replace_editor", args), "toolcall").action.insert_line == 7


def test_missing_closing_tag_at_end_of_text():
    raw = '<tool_call>\n{"name": "bash", "arguments": {"command": "pytest -q"}}'
    assert parse(raw, "toolcall").action == Bash("pytest -q")


def test_arguments_serialised_as_a_json_string():
    inner = json.dumps({"command": "ls"})
    raw = f'<tool_call>{{"name": "bash", "arguments": {json.dumps(inner)}}}</tool_call>'
    assert parse(raw, "toolcall").action == Bash("ls")


def test_raw_newlines_inside_json_strings_are_accepted():
    raw = '<tool_call>\n{"name": "bash", "arguments": {"command": "echo a\necho b"}}\n</tool_call>'
    assert parse(raw, "toolcall").action == Bash("echo a\necho b")


def test_qwen3_coder_function_body_inside_tool_call():
    raw = (
        "<tool_call>\n<function=str_replace_editor>\n<parameter=command>\ncreate\n</parameter>\n"
        "<parameter=path>\nrepro.py\n</parameter>\n<parameter=file_text>\nimport a\n\nprint(a)\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    assert parse(raw, "toolcall").action == StrReplaceEditor(
        command="create", path="repro.py", file_text="import a\n\nprint(a)"
    )


def test_json_fenced_inside_the_tool_call():
    raw = '<tool_call>\n```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```\n</tool_call>'
    assert parse(raw, "toolcall").action == Bash("ls")


def test_tags_inside_argument_values_are_plain_text():
    command = "printf '</think> <tool_call> </tool_call>'"
    step = parse("<think>hm</think>" + call("bash", {"command": command}), "toolcall")
    assert step.action == Bash(command)
    assert step.thought == "hm"


def test_unfinished_think_block_means_no_call_yet():
    with pytest.raises(ParseError, match="No tool call found"):
        parse("<think>I wonder whether <tool_call> is", "toolcall")


def test_finish_is_submit():
    assert parse(call("finish", {}), "toolcall").action == Submit()


def test_second_call_is_not_proposed_and_the_model_is_told():
    raw = call("bash", {"command": "ls"}) + "\n" + call("bash", {"command": "rm -rf /"})
    step = parse(raw, "toolcall")
    assert step.action == Bash("ls")
    assert "2 actions" in step.notice and "NOT run" in step.notice


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("I am done, the bug is fixed.", "No tool call found"),
        ("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": }}\n</tool_call>", "not valid JSON"),
        (call("python", {"code": "1"}), "no tool named 'python'"),
        (call("bash", {}), "non-empty \"command\""),
        (call("bash", {"cmd": "ls"}), "bash has no parameter(s) cmd"),
        (call("str_replace_editor", {"command": "delete", "path": "a"}), "must be one of"),
        (call("str_replace_editor", {"command": "view"}), "needs a `path`"),
        (call("str_replace_editor", {"command": "create", "path": "a"}), "needs: file_text"),
        (call("str_replace_editor", {"command": "insert", "path": "a", "new_str": "x"}), "needs: insert_line"),
        (call("str_replace_editor", {"command": "view", "path": "a", "view_range": "[1]"}), "two integers"),
        (call("str_replace_editor", {"command": "insert", "path": "a", "new_str": "x", "insert_line": "two"}), "must be an integer"),
        ('<tool_call>{"name": "bash", "arguments": "not json"}</tool_call>', "not a JSON object"),
        ('<tool_call>["bash"]</tool_call>', '"name" string'),
        ("<tool_call>bash ls</tool_call>", "one JSON object"),
    ],
)
def test_failures_say_what_was_wrong_and_show_an_example(raw, fragment):
    with pytest.raises(ParseError) as info:
        parse(raw, "toolcall")
    assert fragment in str(info.value)
    assert info.value.dialect == "toolcall"
    assert str(info.value).endswith(get_dialect("toolcall").example)
    assert '"name": "str_replace_editor"' in str(info.value).split(EXAMPLE_HEADER)[1]


def test_render_matches_the_chat_template_shape():
    assert render(Bash("ls"), "toolcall") == (
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
    )
    text = render(StrReplaceEditor("view", "a.py", view_range=[1, 2]), "toolcall", "look")
    assert text.startswith("look\n<tool_call>\n")
    assert json.loads(text.split("\n")[2]) == {
        "name": "str_replace_editor",
        "arguments": {"command": "view", "path": "a.py", "view_range": [1, 2]},
    }


def test_stop_after_closing_tag():
    assert toolcall.STOP_AFTER == ["</tool_call>"]
