"""File tools on a real temp git repo: read, edit, str_replace_editor, previews, undo."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_core.actions import Edit, StrReplaceEditor
from agent_core.executor.files import FileTools
from agent_core.executor.paths import Confinement
from tests.fixtures.repos import git

OPS = "calc/ops.py"


@pytest.fixture
def tools(git_repo: Path) -> FileTools:
    return FileTools(Confinement(git_repo), window=50, char_limit=4_000)


def editor(command: str, path: str = OPS, **kw) -> StrReplaceEditor:
    return StrReplaceEditor(command=command, path=path, **kw)


def test_read_numbers_lines(tools: FileTools):
    obs = tools.read(OPS)
    assert obs.error is None
    lines = obs.output.splitlines()
    assert lines[0] == "     1\tdef add(a, b):"
    assert lines[6] == "     7\t    return sum(values) / (len(values) + 1)"
    assert len(lines) == 7


def test_read_large_file_is_windowed_with_hint(tools: FileTools, git_repo: Path):
    (git_repo / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 201)))
    obs = tools.read("big.txt")
    assert obs.output.splitlines()[49] == "    50\trow 50"
    assert "row 51" not in obs.output
    assert "[showing lines 1-50 of 200" in obs.output
    assert "view_range [51, 100]" in obs.output and "sed -n '51,100p' big.txt" in obs.output


def test_read_respects_character_budget_for_long_lines(tools: FileTools, git_repo: Path):
    (git_repo / "wide.txt").write_text(("x" * 1_500 + "\n") * 10)
    obs = tools.read("wide.txt")
    assert "[showing lines 1-2 of 10" in obs.output


def test_read_binary_and_non_utf8_and_missing(tools: FileTools, git_repo: Path):
    (git_repo / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    (git_repo / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    assert "binary file" in tools.read("blob.bin").error
    assert "not UTF-8" in tools.read("latin.txt").error
    missing = tools.read("calc/nope.py")
    assert missing.error == "The path calc/nope.py does not exist. Please provide a valid path."


def test_view_range_and_minus_one(tools: FileTools):
    obs = tools.view(OPS, [5, 6])
    assert obs.output.startswith(f"Here's the result of running `cat -n` on {OPS}:\n")
    assert obs.output.splitlines()[1:] == ["     5\tdef average(values):",
                                           '     6\t    """Mean of a non-empty list."""']
    # SWE-agent numbers the empty string after the final newline too
    assert tools.view(OPS, [6, -1]).output.splitlines()[-1] == "     8\t"


@pytest.mark.parametrize("bad, expected", [
    ([0, 3], "Its first element `0` should be within the range of lines of the file: [1, 8]"),
    ([9, 9], "Its first element `9` should be within the range of lines of the file: [1, 8]"),
    ([8, 9], "Its second element `9` should be smaller than the number of lines in the file: `8`"),
    ([3, 2], "Its second element `2` should be larger or equal than its first `3`"),
    ([1], "Invalid `view_range`. It should be a list of two integers."),
])
def test_view_range_validated(tools: FileTools, bad: list[int], expected: str):
    obs = tools.view(OPS, bad)
    assert expected in obs.error


def test_view_directory_two_levels_no_hidden(tools: FileTools, git_repo: Path):
    (git_repo / "calc" / "deep" / "deeper").mkdir(parents=True)
    (git_repo / "calc" / "deep" / "deeper" / "x.py").write_text("")
    obs = tools.view(".", None)
    listing = obs.output.splitlines()[1:]
    assert "calc" in listing and "calc/ops.py" in listing and "calc/deep" in listing
    assert "calc/deep/deeper/x.py" not in listing
    assert not any(entry.startswith(".git") for entry in listing)
    assert "not allowed" in tools.view("calc", [1, 2]).error


def test_create_new_file_with_parents_and_refuse_existing(tools: FileTools, git_repo: Path):
    obs = tools.execute(editor("create", "pkg/new/mod.py", file_text="A = 1\n"))
    assert obs.error is None and "created" in obs.output
    assert (git_repo / "pkg/new/mod.py").read_text() == "A = 1\n"
    refused = tools.execute(editor("create", OPS, file_text="oops"))
    assert "already exists" in refused.error
    assert "def add" in (git_repo / OPS).read_text()
    assert "file_text" in tools.execute(editor("create", "x.py")).error


def test_str_replace_unique(tools: FileTools, git_repo: Path):
    obs = tools.execute(editor("str_replace", old_str="(len(values) + 1)", new_str="len(values)"))
    assert obs.error is None
    assert "     7\t    return sum(values) / len(values)" in obs.output
    assert "     3\t" in obs.output  # context before the change
    assert "return sum(values) / len(values)\n" in (git_repo / OPS).read_text()


def test_str_replace_non_unique_reports_lines_and_changes_nothing(tools: FileTools, git_repo: Path):
    before = (git_repo / OPS).read_text()
    obs = tools.execute(editor("str_replace", old_str="return", new_str="yield"))
    assert "Multiple occurrences" in obs.error and "[2, 7]" in obs.error
    assert (git_repo / OPS).read_text() == before


def test_str_replace_missing_and_empty_old_str(tools: FileTools):
    assert "did not appear verbatim" in tools.execute(editor("str_replace", old_str="nope")).error
    assert "old_str" in tools.execute(editor("str_replace", old_str="")).error


def test_str_replace_multiline_with_deletion(tools: FileTools, git_repo: Path):
    old = "def add(a, b):\n    return a + b\n\n\n"
    assert tools.execute(editor("str_replace", old_str=old)).error is None
    assert (git_repo / OPS).read_text().startswith("def average(values):\n")


def test_insert_after_line_and_range_checked(tools: FileTools, git_repo: Path):
    obs = tools.execute(editor("insert", insert_line=0, new_str="import math"))
    assert obs.error is None and "     1\timport math" in obs.output
    assert (git_repo / OPS).read_text().splitlines()[:2] == ["import math", "def add(a, b):"]
    obs = tools.execute(editor("insert", insert_line=8, new_str="# end\n"))
    assert (git_repo / OPS).read_text().endswith("+ 1)\n# end\n")
    bad = tools.execute(editor("insert", insert_line=42, new_str="x"))
    assert "It should be within the range of lines of the file: [0, 10]" in bad.error


def test_undo_edit_per_file_in_order(tools: FileTools, git_repo: Path):
    original_ops = (git_repo / OPS).read_text()
    original_readme = (git_repo / "README.md").read_text()
    tools.execute(editor("str_replace", old_str="a + b", new_str="a - b"))
    tools.execute(editor("str_replace", old_str="a - b", new_str="b + a"))
    tools.execute(editor("insert", "README.md", insert_line=0, new_str="top"))
    first_undo = tools.execute(editor("undo_edit"))
    assert "undone" in first_undo.output and "a - b" in first_undo.output
    assert (git_repo / "README.md").read_text().startswith("top\n")
    tools.execute(editor("undo_edit"))
    assert (git_repo / OPS).read_text() == original_ops
    assert "No edit history" in tools.execute(editor("undo_edit")).error
    tools.execute(editor("undo_edit", "README.md"))
    assert (git_repo / "README.md").read_text() == original_readme


def test_undo_of_create_removes_the_file(tools: FileTools, git_repo: Path):
    tools.execute(editor("create", "fresh.py", file_text="x = 1\n"))
    obs = tools.execute(editor("undo_edit", "fresh.py"))
    assert obs.error is None and not (git_repo / "fresh.py").exists()


def test_edit_replaces_inserts_and_deletes_lines(tools: FileTools, git_repo: Path):
    obs = tools.execute(Edit(OPS, 7, 7, "    return sum(values) / len(values)\n"))
    assert obs.error is None
    assert "replaced lines 7-7" in obs.output and "     7\t    return sum(values) / len(values)" in obs.output
    tools.execute(Edit(OPS, 1, 0, '"""Ops."""'))
    assert (git_repo / OPS).read_text().startswith('"""Ops."""\ndef add')
    tools.execute(Edit(OPS, 1, 1, ""))
    assert (git_repo / OPS).read_text().startswith("def add")


@pytest.mark.parametrize("start, end", [(0, 1), (9, 9), (3, 1), (2, 8), (-1, 2)])
def test_edit_out_of_range_refused_and_file_untouched(tools: FileTools, git_repo: Path, start, end):
    before = (git_repo / OPS).read_text()
    obs = tools.execute(Edit(OPS, start, end, "x"))
    assert "Invalid line range" in obs.error and "7 lines" in obs.error
    assert (git_repo / OPS).read_text() == before


def test_edit_on_missing_file_points_to_create(tools: FileTools):
    assert "does not exist" in tools.execute(Edit("calc/missing.py", 1, 0, "x")).error


def test_preview_is_the_diff_git_would_show_and_changes_nothing(tools: FileTools, git_repo: Path):
    action = editor("str_replace", old_str="(len(values) + 1)", new_str="len(values)")
    preview = tools.preview(action)
    assert git(git_repo, "status", "--porcelain") == ""
    assert preview.startswith(f"--- a/{OPS}\n+++ b/{OPS}\n")
    tools.execute(action)
    real = git(git_repo, "diff", "-U3", "--no-color", OPS)
    assert _hunks(preview) == _hunks(real)
    assert "+    return sum(values) / len(values)" in preview


def _hunks(diff: str) -> list[str]:
    """Header, hunk ranges and changed lines (git adds function context to @@ lines)."""
    return [re.sub(r"^(@@ [^@]* @@).*", r"\1", line)
            for line in diff.splitlines() if line[:1] in ("+", "-", "@", " ")]


def test_preview_of_create_and_of_an_error(tools: FileTools):
    assert tools.preview(editor("create", "n.py", file_text="a\n")).startswith("--- /dev/null\n+++ b/n.py")
    assert tools.preview(editor("str_replace", old_str="return")).startswith("error: No replacement")


def test_writes_into_dot_git_refused(tools: FileTools, git_repo: Path):
    obs = tools.execute(editor("create", ".git/hooks/pre-commit", file_text="rm -rf /"))
    assert "belongs to git" in obs.error
    assert not (git_repo / ".git/hooks/pre-commit").exists()


def test_unknown_editor_command(tools: FileTools):
    assert "Unknown command 'delete'" in tools.execute(editor("delete")).error


def test_line_endings_and_missing_final_newline_preserved(tools: FileTools, git_repo: Path):
    (git_repo / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    tools.execute(Edit("dos.txt", 2, 1, "inserted"))
    assert (git_repo / "dos.txt").read_bytes() == b"one\r\ninserted\r\ntwo\r\n"
    (git_repo / "tail.txt").write_text("a\nb")
    tools.execute(editor("insert", "tail.txt", insert_line=1, new_str="mid"))
    assert (git_repo / "tail.txt").read_text() == "a\nmid\nb"
    diff = tools.preview(Edit("tail.txt", 3, 3, "c"))
    assert diff.endswith("-b\n\\ No newline at end of file\n+c\n")


def test_empty_and_oversized_files(tools: FileTools, git_repo: Path):
    (git_repo / "empty.txt").write_text("")
    assert tools.read("empty.txt").output == "[empty.txt is empty]\n"
    assert tools.execute(editor("insert", "empty.txt", insert_line=0, new_str="first")).error is None
    assert (git_repo / "empty.txt").read_text() == "first\n"
    with open(git_repo / "huge.log", "wb") as handle:
        handle.truncate(21 * 1024 * 1024)
    assert "too large" in tools.read("huge.log").error
