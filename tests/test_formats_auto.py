"""Picking the dialect by content, the dialect registry and `translate`."""

import pytest

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.formats import DIALECTS, ParseError, detect_dialect, parse, render, translate


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


def apply_edit(source: str, edit: Edit) -> str:
    """Line-edit semantics as actions.py documents them (content lines replace start..end)."""
    lines = source.splitlines(keepends=True)
    new = [line + "\n" for line in edit.content.split("\n")] if edit.content else []
    return "".join(lines[: edit.start - 1] + new + lines[edit.end:])


def apply_str_replace(source: str, step: StrReplaceEditor) -> str:
    assert source.count(step.old_str) == 1
    return source.replace(step.old_str, step.new_str)


SOURCE = "def f():\n    return 1\n\ndef g():\n    return 1\n\nprint(f())\n"


@pytest.mark.parametrize("dialect", ["toolcall", "xml"])
@pytest.mark.parametrize(
    "edit",
    [
        Edit("a.py", 5, 5, "    return 2"),  # "    return 1" occurs twice: widened until unique
        Edit("a.py", 1, 2, "def f():\n    return 3"),
        Edit("a.py", 3, 3, ""),
    ],
)
def test_line_edit_becomes_an_equivalent_str_replace(dialect, edit):
    step = translate(edit, dialect, read_file=lambda path: SOURCE)
    assert step.command == "str_replace" and step.path == "a.py"
    assert apply_str_replace(SOURCE, step) == apply_edit(SOURCE, edit)
    assert parse(render(step, dialect), dialect).action == step


def test_insert_edit_needs_no_file_and_line_edit_without_file_is_refused():
    assert translate(Edit("a.py", 3, 2, "x"), "xml") == StrReplaceEditor(
        command="insert", path="a.py", insert_line=2, new_str="x"
    )
    with pytest.raises(ValueError, match="read_file"):
        translate(Edit("a.py", 3, 4, "x"), "toolcall")


def test_str_replace_becomes_an_equivalent_line_edit():
    step = StrReplaceEditor("str_replace", "a.py", old_str="return 1\n\ndef g", new_str="return 0\n\ndef h")
    edit = translate(step, "text", read_file=lambda path: SOURCE)
    assert edit == Edit("a.py", 2, 4, "    return 0\n\ndef h():")
    assert apply_edit(SOURCE, edit) == apply_str_replace(SOURCE, step)


def test_translations_between_vocabularies():
    assert translate(Read("a.py"), "toolcall") == StrReplaceEditor("view", "a.py")
    assert translate(Search("x y", "src"), "toolcall") == Bash(
        "grep -rn --exclude-dir=.git -e 'x y' src"
    )
    assert translate(Search("x"), "xml") == Search("x")
    assert translate(StrReplaceEditor("view", "a.py"), "text") == Read("a.py")
    assert translate(StrReplaceEditor("insert", "a.py", insert_line=0, new_str="x"), "text") == Edit(
        "a.py", 1, 0, "x"
    )
    with pytest.raises(ValueError, match="undo"):
        translate(StrReplaceEditor("undo_edit", "a.py"), "text")
    with pytest.raises(ValueError, match="occurs 0 times"):
        translate(StrReplaceEditor("str_replace", "a.py", old_str="zzz", new_str=""), "text", read_file=lambda p: SOURCE)


def test_translated_view_range_and_create_run_in_real_bash(tmp_path):
    import subprocess

    (tmp_path / "a.py").write_text(SOURCE)
    view = translate(StrReplaceEditor("view", "a.py", view_range=[4, -1]), "text")
    out = subprocess.run(view.command, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.splitlines()[0].split() == ["4", "def", "g():"]
    assert len(out.stdout.splitlines()) == 4
    create = translate(StrReplaceEditor("create", "new dir/b.py", file_text="x = 'a'\n$y"), "text")
    subprocess.run(create.command, shell=True, cwd=tmp_path, check=True)
    assert (tmp_path / "new dir" / "b.py").read_text() == "x = 'a'\n$y"
    again = subprocess.run(create.command, shell=True, cwd=tmp_path, capture_output=True)
    assert again.returncode != 0, "create must refuse an existing file"
