"""`translate`: an equivalent action a dialect can express, checked with the real file tools."""

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.executor.files import FileTools, ToolError
from agent_core.executor.paths import Confinement
from agent_core.formats import parse, render, translate

SOURCE = "def f():\n    return 1\n\ndef g():\n    return 1\n\nprint(f())\n"


def planned(source: str, action) -> str:
    """The file text the executor's file tools would leave after `action` (nothing is written)."""
    with tempfile.TemporaryDirectory() as root:
        Path(root, "a.py").write_bytes(source.encode())
        return FileTools(Confinement(Path(root))).plan(action).after


def reader(source: str):
    return lambda path: source


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
    step = translate(edit, dialect, read_file=reader(SOURCE))
    assert step.command == "str_replace" and step.path == "a.py"
    assert SOURCE.count(step.old_str) == 1
    assert planned(SOURCE, step) == planned(SOURCE, edit)
    assert parse(render(step, dialect), dialect).action == step


def test_str_replace_becomes_an_equivalent_line_edit():
    step = StrReplaceEditor("str_replace", "a.py", old_str="return 1\n\ndef g", new_str="return 0\n\ndef h")
    edit = translate(step, "text", read_file=reader(SOURCE))
    assert edit == Edit("a.py", 2, 4, "    return 0\n\ndef h():\n")
    assert planned(SOURCE, edit) == planned(SOURCE, step)
    assert parse(render(edit, "text"), "text").action == edit


def test_str_replace_that_joins_lines_or_leaves_a_blank_line():
    join = StrReplaceEditor("str_replace", "a.py", old_str="1\n\ndef g():\n", new_str="1 ")
    blank = StrReplaceEditor("str_replace", "a.py", old_str="def g():\n    return 1", new_str="")
    for step in (join, blank):
        edit = translate(step, "text", read_file=reader(SOURCE))
        assert planned(SOURCE, edit) == planned(SOURCE, step)


def test_what_has_no_equivalent_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="read_file"):
        translate(Edit("a.py", 3, 4, "x"), "toolcall")
    with pytest.raises(ValueError, match="read_file"):
        translate(StrReplaceEditor("str_replace", "a.py", old_str="x", new_str="y"), "text")
    with pytest.raises(ValueError, match="undo"):
        translate(StrReplaceEditor("undo_edit", "a.py"), "text")
    with pytest.raises(ValueError, match="occurs 2 times"):
        translate(StrReplaceEditor("str_replace", "a.py", old_str="return 1", new_str=""), "text",
                  read_file=reader(SOURCE))
    with pytest.raises(ValueError, match="final newline"):
        translate(StrReplaceEditor("str_replace", "a.py", old_str="print(f())\n", new_str="x"),
                  "text", read_file=reader(SOURCE))
    with pytest.raises(ValueError, match="outside"):
        translate(Edit("a.py", 7, 9, "x"), "xml", read_file=reader(SOURCE))


def test_kinds_the_dialect_has_pass_through_and_others_are_mapped():
    assert translate(Bash("ls"), "text") == Bash("ls")
    assert translate(Submit(), "toolcall") == Submit()
    assert translate(Search("x"), "xml") == Search("x")
    assert translate(Read("a.py"), "toolcall") == StrReplaceEditor("view", "a.py")
    assert translate(Search("x y", "src"), "toolcall") == Bash(
        "grep -rn --exclude-dir=.git -e 'x y' src"
    )
    assert translate(StrReplaceEditor("view", "a.py"), "text") == Read("a.py")
    assert translate(Edit("a.py", 3, 2, "x"), "xml") == StrReplaceEditor(
        command="insert", path="a.py", insert_line=2, new_str="x"
    )
    insert = StrReplaceEditor("insert", "a.py", insert_line=0, new_str="import os")
    assert translate(insert, "text") == Edit("a.py", 1, 0, "import os")
    assert planned(SOURCE, translate(insert, "text")) == planned(SOURCE, insert)


def test_translated_view_range_and_create_run_in_real_bash(tmp_path):
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


# Few distinct lines, so repeated lines (non-unique old_str) are common.
lines = st.lists(st.sampled_from(["a", "b", "", "  c", "a b"]), min_size=1, max_size=8)
sources = lines.map(lambda ls: "\n".join(ls) + "\n")
contents = st.lists(st.sampled_from(["a", "x", "", "  y"]), max_size=3).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(source=sources, data=st.data())
def test_any_line_edit_and_its_str_replace_leave_the_same_file(source, data):
    count = source.count("\n")
    start = data.draw(st.integers(1, count))
    end = data.draw(st.integers(start, count))
    edit = Edit("a.py", start, end, data.draw(contents))
    for dialect in ("toolcall", "xml"):
        step = translate(edit, dialect, read_file=reader(source))
        if planned(source, edit) == source:  # a no-op: SWE-agent's editor refuses old == new
            with pytest.raises(ToolError, match="is the same as new_str"):
                planned(source, step)
            continue
        assert planned(source, step) == planned(source, edit)


@settings(max_examples=150, deadline=None)
@given(source=sources, data=st.data())
def test_any_unique_str_replace_and_its_line_edit_leave_the_same_file(source, data):
    i = data.draw(st.integers(0, len(source) - 1))
    j = data.draw(st.integers(i + 1, len(source)))
    old = source[i:j]
    if sum(source.startswith(old, k) for k in range(len(source))) != 1:
        return  # the executor refuses a non-unique old_str (overlapping matches count)
    step = StrReplaceEditor("str_replace", "a.py", old_str=old, new_str=data.draw(contents))
    if step.new_str == old:
        return  # the executor refuses old_str == new_str, as SWE-agent's editor does
    try:
        edit = translate(step, "text", read_file=reader(source))
    except ValueError as error:
        assert "final newline" in str(error)
        assert not planned(source, step).endswith("\n")
        return
    assert planned(source, edit) == planned(source, step)
