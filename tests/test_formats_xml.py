"""The xml dialect: SWE-smith / R2E-Gym `<function=...>` turns."""

import pytest

from agent_core.actions import Bash, Search, StrReplaceEditor, Submit
from agent_core.formats import ParseError, get_dialect, parse, render
from agent_core.formats.examples import EXAMPLE_HEADER
from agent_core.formats import xml


def test_reasoning_before_the_call_is_the_thought():
    raw = (
        "Let's look at the file.\n\n<function=str_replace_editor>\n<parameter=command>view"
        "</parameter>\n<parameter=path>/testbed/a.py</parameter>\n<parameter=view_range>"
        "[10, 20]</parameter>\n</function>"
    )
    step = parse(raw, "xml")
    assert step.thought == "Let's look at the file."
    assert step.action == StrReplaceEditor(command="view", path="/testbed/a.py", view_range=[10, 20])
    assert step.notice is None


def test_exactly_one_leading_and_trailing_newline_is_stripped():
    raw = (
        "<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n"
        "<parameter=path>a.py</parameter>\n<parameter=old_str>\n\n    x = 1\n\n</parameter>\n"
        "<parameter=new_str>\n    x = 2\n</parameter>\n</function>"
    )
    action = parse(raw, "xml").action
    assert action.old_str == "\n    x = 1\n"
    assert action.new_str == "    x = 2"


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("<function=execute_bash>\n<parameter=cmd>ls</parameter>\n</function>", Bash("ls")),
        (
            "<function=file_editor>\n<parameter=command>view</parameter>\n<parameter=path>/r/a.py"
            "</parameter>\n<parameter=concise>True</parameter>\n</function>",
            StrReplaceEditor(command="view", path="/r/a.py"),
        ),
        (
            "<function=search>\n<parameter=search_term>def f</parameter>\n<parameter=path>src"
            "</parameter>\n</function>",
            Search("def f", "src"),
        ),
        ("<function=search>\n<parameter=search_term>x</parameter>\n</function>", Search("x")),
        ("<function=finish>\n<parameter=command>submit</parameter>\n</function>", Submit()),
        ("<function=submit>\n</function>", Submit()),
    ],
)
def test_r2e_gym_names_map_to_the_shared_vocabulary(raw, expected):
    assert parse(raw, "xml").action == expected


def test_missing_closing_function_tag_at_end_of_text():
    assert parse("<function=bash>\n<parameter=command>ls</parameter>\n", "xml").action == Bash("ls")


def test_closing_tags_inside_a_value_do_not_end_the_call():
    raw = "<function=bash>\n<parameter=command>echo '</function>'</parameter>\n</function>"
    assert parse(raw, "xml").action == Bash("echo '</function>'")


def test_second_call_is_not_proposed_and_the_model_is_told():
    raw = (
        "<function=bash>\n<parameter=command>ls</parameter>\n</function>\nand then\n"
        "<function=submit>\n</function>"
    )
    step = parse(raw, "xml")
    assert step.action == Bash("ls")
    assert "2 actions" in step.notice and "NOT run" in step.notice


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("I should look at the code first.", "No function call found"),
        ("<function=python>\n<parameter=code>1</parameter>\n</function>", "no function named 'python'"),
        ("<function=bash>\n<parameter=command>ls\n</function>", "never closed"),
        ("<function=bash>\nls -la\n</function>", "only parameter blocks such as"),
        ("<function=bash>\n<parameter=command> </parameter>\n</function>", "non-empty `command`"),
        ("<function=bash>\n<parameter=cmd>a</parameter>\n<parameter=cmd>b</parameter>\n</function>", "given twice"),
        ("<function=search>\n<parameter=query>x</parameter>\n</function>", "no parameter(s) query"),
        (
            "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>a"
            "</parameter>\n<parameter=view_range>10-20</parameter>\n</function>",
            "two integers",
        ),
        (
            "<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n"
            "<parameter=path>a</parameter>\n</function>",
            "needs: old_str",
        ),
    ],
)
def test_failures_say_what_was_wrong_and_show_an_example(raw, fragment):
    with pytest.raises(ParseError) as info:
        parse(raw, "xml")
    assert fragment in str(info.value)
    assert info.value.dialect == "xml"
    assert str(info.value).endswith(get_dialect("xml").example)
    assert "<function=str_replace_editor>" in str(info.value).split(EXAMPLE_HEADER)[1]


def test_render_puts_one_line_values_inline_and_multi_line_values_on_their_own_lines():
    text = render(StrReplaceEditor("create", "/t/a.py", file_text="x = 1\ny = 2"), "xml", "Make it.")
    assert text == (
        "Make it.\n\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n"
        "<parameter=path>/t/a.py</parameter>\n<parameter=file_text>\nx = 1\ny = 2\n</parameter>\n"
        "</function>"
    )
    assert render(Submit(), "xml") == "<function=submit>\n</function>"


def test_render_refuses_a_value_holding_the_closing_parameter_tag():
    with pytest.raises(ValueError, match="</parameter>"):
        render(Bash("echo '</parameter>'"), "xml")


def test_stop_after_closing_function_tag():
    assert xml.STOP_AFTER == ["</function>"]
