"""The texts SWE-agent's `str_replace_editor` answers with, for the model trained on them.

Model-interface data: the messages, the `cat -n` layout, the 16,000-character clip with its
note, the edit snippets (4 lines around the change) and the abbreviated view of a large Python
file ("filemap", SWE-smith runs with `USE_FILEMAP: true`) follow SWE-agent's
tools/edit_anthropic/bin/str_replace_editor (MIT, Copyright (c) 2024 John Yang, Carlos E.
Jimenez, Alexander Wettig, Shunyu Yao, Karthik Narasimhan, Ofir Press; github.com/SWE-agent/
SWE-agent). The code is navtui's own: the filemap is
computed with Python's `ast` instead of tree-sitter.
"""

from __future__ import annotations

import ast

MAX_RESPONSE_LEN = 16_000
SNIPPET_LINES = 4
TRUNCATED_MESSAGE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. "
    "You should retry this tool after you have searched inside the file with `grep -n` in order "
    "to find the line numbers of what you are looking for.</NOTE>"
)
FILEMAP_NOTE = (
    "<NOTE>This file is too large to display entirely. Showing abbreviated version. Please use "
    "`str_replace_editor view` with the `view_range` parameter to show selected lines next.</NOTE>"
)
FILEMAP_END = (
    "<IMPORTANT><NOTE>The above file has been abbreviated. Please use `str_replace editor view` "
    "with `view_range` to look at relevant files in detail.</NOTE></IMPORTANT>"
)
EDITED_TAIL = "Review the changes and make sure they are as expected. Edit the file again if necessary."
INSERTED_TAIL = (
    "Review the changes and make sure they are as expected (correct indentation, no duplicate "
    "lines, etc). Edit the file again if necessary."
)
# Function bodies spanning at least this many lines (last minus first) are elided in a filemap.
ELIDE_MIN_SPAN = 5


def maybe_truncate(content: str, limit: int = MAX_RESPONSE_LEN) -> str:
    return content if len(content) <= limit else content[:limit] + TRUNCATED_MESSAGE


def cat_n(content: str, descriptor: str, init_line: int = 1) -> str:
    """`Here's the result of running `cat -n` on <descriptor>:` and the numbered lines."""
    content = maybe_truncate(content).expandtabs()
    numbered = "\n".join(
        f"{number:6}\t{line}" for number, line in enumerate(content.split("\n"), start=init_line)
    )
    return f"Here's the result of running `cat -n` on {descriptor}:\n{numbered}\n"


def view_range_error(view_range: list[int], count: int) -> str | None:
    """SWE-agent's complaint about `view_range` for a file of `count` lines, or None if valid."""
    if len(view_range) != 2 or not all(isinstance(v, int) for v in view_range):
        return "Invalid `view_range`. It should be a list of two integers."
    first, last = view_range
    if first < 1 or first > count:
        return (f"Invalid `view_range`: {view_range}. Its first element `{first}` should be "
                f"within the range of lines of the file: {[1, count]}")
    if last > count:
        return (f"Invalid `view_range`: {view_range}. Its second element `{last}` should be "
                f"smaller than the number of lines in the file: `{count}`")
    if last != -1 and last < first:
        return (f"Invalid `view_range`: {view_range}. Its second element `{last}` should be "
                f"larger or equal than its first `{first}`")
    return None


def file_view(text: str, name: str, view_range: list[int] | None) -> str:
    """The whole view answer for a file (the range already checked with `view_range_error`)."""
    if view_range:
        lines = text.split("\n")
        first, last = view_range
        last = len(lines) if last == -1 else last
        return cat_n("\n".join(lines[first - 1 : last]), name, first)
    if name.endswith(".py") and len(text) > MAX_RESPONSE_LEN:
        abbreviated = filemap(text)
        if abbreviated is not None:
            return f"{FILEMAP_NOTE}\n{maybe_truncate(abbreviated.expandtabs())}\n{FILEMAP_END}\n"
    return cat_n(text, name)


def filemap(text: str) -> str | None:
    """The file with every long function body replaced by `... eliding lines A-B ...`
    (numbered as `{:6d} line`); None when it does not parse as Python."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    ranges = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            start = node.body[0].lineno - 1
            end = (node.body[-1].end_lineno or node.body[-1].lineno) - 1
            if end - start >= ELIDE_MIN_SPAN:
                ranges.append((start, end))
    elided = {line for start, end in ranges for line in range(start, end + 1)}
    entries = [(start, f"... eliding lines {start + 1}-{end + 1} ...") for start, end in ranges]
    entries += [(i, line) for i, line in enumerate(text.splitlines()) if i not in elided]
    return "\n".join(f"{i + 1:6d} {line}" for i, line in sorted(entries))


def str_replace_reply(name: str, before: str, after: str, old: str, new: str) -> str:
    """`The file ... has been edited.` with the snippet SWE-agent shows around the change."""
    line = before.split(old)[0].count("\n")
    start = max(1, line - SNIPPET_LINES)
    end = min(line + SNIPPET_LINES + new.count("\n"), len(after.splitlines()))
    snippet = "\n".join(after.split("\n")[start - 1 : end])
    return f"The file {name} has been edited. " + cat_n(snippet, f"a snippet of {name}", start) + EDITED_TAIL


def insert_reply(name: str, after: str, insert_line: int, inserted: int) -> str:
    """`The file ... has been edited.` with up to 4 lines either side of the inserted ones."""
    lines = after.split("\n")
    low = max(0, insert_line - SNIPPET_LINES)
    snippet = "\n".join(lines[low : insert_line + inserted + SNIPPET_LINES])
    return (f"The file {name} has been edited. "
            + cat_n(snippet, "a snippet of the edited file", max(1, insert_line - SNIPPET_LINES + 1))
            + INSERTED_TAIL)


def directory_listing(name: str, entries: list[str]) -> str:
    """The answer for viewing a directory: the directory and its entries, one per line."""
    listed = "".join(f"{entry}\n" for entry in [name, *entries])
    return f"Here's the files and directories up to 2 levels deep in {name}, excluding hidden items:\n{listed}\n"
