"""Picking the dialect by content, and the dialect registry."""

import pytest

from agent_core.actions import Edit, StrReplaceEditor, Submit
from agent_core.formats import DIALECTS, ParseError, detect_dialect, parse, render


@pytest.mark.parametrize(
    "raw, dialect",
    [
        ("Thought: t\nAction: bash ls", "text"),
        ('<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>', "toolcall"),
        ("<function=bash>\n<parameter=command>ls</parameter>\n</function>", "xml"),
        # a Qwen3-Coder body inside <tool_call> is still toolcall
        ("<tool_call>\n<function=bash>\n<parameter=command>ls</parameter>\n</function>\n</tool_call>", "toolcall"),
        # an xml call whose value holds an Action: line is xml
        ("<function=bash>\n<parameter=command>\nAction: x\n</parameter>\n</function>", "xml"),
        # a bash command that mentions <function= is text
        ("Thought: t\nAction: bash grep -rn '<function=' .", "text"),
        ("no action at all", None),
        # a think block with an Action: line before a real tool call: refuse to guess
        ('<think>\nAction: call bash\n</think>\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>', None),
        # the same with a tool call that could not run: the text reading stands
        ("Thought: t\nAction: bash echo '<tool_call>{oops}'", "text"),
        # two dialects side by side: refuse to guess
        ("Action: bash ls\n\n## Your turn\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>", None),
    ],
)
def test_detect_dialect(raw, dialect):
    assert detect_dialect(raw) == dialect
    if dialect is None:
        with pytest.raises(ParseError):
            parse(raw)
    else:
        assert parse(raw).dialect == dialect


def test_auto_refusal_says_the_formats_are_mixed():
    raw = "Action: bash ls\n\n## Your turn\n<function=bash>\n<parameter=command>pwd</parameter>\n</function>"
    with pytest.raises(ParseError, match="mixes formats \\(text, xml\\)"):
        parse(raw, "auto")


def test_unknown_dialect_is_a_programming_error():
    with pytest.raises(ValueError, match="choose one of text, toolcall, xml"):
        parse("x", "json")
    with pytest.raises(ValueError):
        render(Submit(), "json")
    assert DIALECTS == ("text", "toolcall", "xml")


def test_render_of_an_inexpressible_kind_points_to_translate():
    with pytest.raises(ValueError, match="translate"):
        render(Edit("a.py", 1, 1, "x"), "toolcall")
    with pytest.raises(ValueError, match="translate"):
        render(StrReplaceEditor("view", "a.py"), "text")
