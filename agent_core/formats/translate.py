"""Convert an action into an equivalent one that a dialect can express.

Used when an action has to be shown to a model in a dialect that lacks its kind, e.g. a user's
line `edit` shown to the toolcall model as a `str_replace_editor` call. Edits that replace text
need the file's current content (`read_file`); without it they raise ValueError.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from agent_core.actions import Action, Bash, Edit, Read, Search, StrReplaceEditor

ReadFile = Callable[[str], str]


def translate(action: Action, dialect: str, *, read_file: ReadFile | None = None) -> Action:
    """`action` itself when `dialect` can express it, else an equivalent action it can
    (the dialect's `equivalent`: `to_text` or `to_editor` below).

    `read_file(path)` returns a file's current text; it is needed to turn a line edit into a
    `str_replace` (and back). ValueError when no equivalent exists or the dialect is unknown.
    """
    from agent_core.formats import get_dialect

    found = get_dialect(dialect)
    if action.kind in found.kinds:
        return action
    return found.equivalent(action, read_file)


def grep_command(action: Search) -> Bash:
    path = "." if action.path is None else action.path
    return Bash(f"grep -rn --exclude-dir=.git -e {shlex.quote(action.pattern)} {shlex.quote(path)}")


def to_editor(action: Action, read_file: ReadFile | None) -> Action:
    """For toolcall/xml: read -> view, search -> grep, edit -> insert or str_replace."""
    if isinstance(action, Read):
        return StrReplaceEditor(command="view", path=action.path)
    if isinstance(action, Search):
        return grep_command(action)
    if isinstance(action, Edit):
        if action.end == action.start - 1:
            return StrReplaceEditor(
                command="insert", path=action.path, insert_line=action.end, new_str=action.content
            )
        if read_file is None:
            raise ValueError(
                f"a line edit of {action.path} becomes a str_replace only with the file's current "
                "text: pass read_file"
            )
        return edit_as_str_replace(action, read_file(action.path))
    raise ValueError(f"no str_replace_editor equivalent for a {action.kind!r} action")


def split_lines(source: str) -> list[str]:
    """Lines with their endings, split at "\n" only."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", source)


def occurrences(source: str, old: str) -> int:
    """How many times `old` occurs in `source`, overlapping ones included."""
    count, at = 0, source.find(old)
    while at >= 0:
        count += 1
        at = source.find(old, at + 1)
    return count


def edit_as_str_replace(action: Edit, source: str) -> StrReplaceEditor:
    """The str_replace that does what the line edit does, widened until `old_str` is unique.

    Line-edit semantics (the executor's): each content line is written with the file's line
    ending, so the new text always ends with one.
    """
    lines = split_lines(source)
    if action.start < 1 or action.end > len(lines) or action.end < action.start:
        raise ValueError(
            f"lines {action.start}..{action.end} are outside {action.path} ({len(lines)} lines)"
        )
    ending = "\r\n" if "\r\n" in source else "\n"
    new = "".join(line.rstrip("\r\n") + ending for line in split_lines(action.content))
    low, high = action.start - 1, action.end
    while occurrences(source, "".join(lines[low:high])) > 1:
        low, high = max(low - 1, 0), min(high + 1, len(lines))
    before = "".join(lines[low: action.start - 1])
    after = "".join(lines[action.end: high])
    return StrReplaceEditor(
        command="str_replace",
        path=action.path,
        old_str="".join(lines[low:high]),
        new_str=before + new + after,
    )


def to_text(action: Action, read_file: ReadFile | None) -> Action:
    """For text: view -> read (or numbered sed), create -> printf, str_replace/insert -> edit."""
    if not isinstance(action, StrReplaceEditor):
        raise ValueError(f"no text equivalent for a {action.kind!r} action")
    path = shlex.quote(action.path)
    if action.command == "view":
        if action.view_range is None:
            return Read(path=action.path)
        start, end = action.view_range
        last = "$" if end == -1 else str(end)
        return Bash(f"cat -n {path} | sed -n '{start},{last}p'")
    if action.command == "create":
        body = shlex.quote(action.file_text or "")
        return Bash(f'mkdir -p "$(dirname {path})" && (set -C; printf \'%s\' {body} > {path})')
    if action.command == "insert":
        line = action.insert_line or 0
        return Edit(path=action.path, start=line + 1, end=line, content=action.new_str or "")
    if action.command == "str_replace":
        if read_file is None:
            raise ValueError(
                f"a str_replace in {action.path} becomes a line edit only with the file's "
                "current text: pass read_file"
            )
        return str_replace_as_edit(action, read_file(action.path))
    raise ValueError(
        "undo_edit has no text-dialect equivalent; use navtui's undo to take a step back"
    )


def str_replace_as_edit(action: StrReplaceEditor, source: str) -> Edit:
    """The smallest line edit whose result equals the str_replace's result."""
    old, new = action.old_str or "", action.new_str or ""
    count = occurrences(source, old) if old else 0
    if count != 1:
        raise ValueError(
            f"old_str occurs {count} times in {action.path}; a line edit needs exactly one"
        )
    before, after = split_lines(source), split_lines(source.replace(old, new, 1))
    same = min(len(before), len(after))
    head = 0
    while head < same and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < same - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    content = "".join(after[head: len(after) - tail])
    if content and not content.endswith("\n"):
        raise ValueError(
            f"the replacement leaves {action.path} without a final newline, which no line edit does"
        )
    return Edit(path=action.path, start=head + 1, end=len(before) - tail, content=content)
