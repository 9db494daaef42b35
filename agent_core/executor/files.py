"""File tools: read, line-range edit, and SWE-agent's str_replace_editor (view/create/
str_replace/insert/undo_edit), with previews computed without touching the file.

Every mutating action is first *planned* into a `Change` (path, text before, text after,
reply); executing writes it and remembers the old text for `undo_edit`, previewing diffs it.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_core.actions import Edit, StrReplaceEditor
from agent_core.executor import editor_text
from agent_core.executor.paths import Confinement, PathError
from agent_core.steps import Observation

READ_WINDOW = 400
LINE_CHAR_LIMIT = 2_000
SNIPPET_CONTEXT = 4
DIR_ENTRY_LIMIT = 400
MAX_TEXT_BYTES = 20 * 1024 * 1024
_EDITED_TAIL = "Review the changes and make sure they are as expected. Edit the file again if necessary."


class ToolError(Exception):
    """A model mistake; the message is what the model reads to fix it."""


@dataclass
class Change:
    """A planned edit: `after` None deletes the file, `before` None means it does not exist."""

    path: Path
    before: str | None
    after: str | None
    reply: str


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def require_encodable(text: str, what: str) -> None:
    """Raise ToolError when `text` holds a lone surrogate (e.g. a `\\ud83d` escape without its
    pair in the model's JSON), which no file or shell can take."""
    found = _LONE_SURROGATE.search(text)
    if found:
        raise ToolError(
            f"{what} contains U+{ord(found.group()):04X}, half of a UTF-16 surrogate pair, which "
            "is not valid Unicode. Write the character itself (or both halves of the pair)."
        )


def numbered(lines: list[str], first: int = 1) -> str:
    """`cat -n` style: right-aligned line numbers, a tab, the line (very long lines cut)."""
    out = []
    for number, line in enumerate(lines, start=first):
        line = line.rstrip("\r\n")
        if len(line) > LINE_CHAR_LIMIT:
            line = line[:LINE_CHAR_LIMIT] + f" [... {len(line) - LINE_CHAR_LIMIT} characters cut]"
        out.append(f"{number:6}\t{line}")
    return "\n".join(out) + ("\n" if out else "")


def _as_lines(text: str) -> list[str]:
    """Lines with their endings; a last line without newline gets one (so joins stay sane)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def _splice(before: str, start: int, end: int, new_text: str) -> tuple[str, int]:
    """Replace lines `start`..`end` (1-based; `end = start-1` inserts) with `new_text`'s lines.

    New lines take the file's line ending; a missing final newline stays missing when the last
    line is left alone. Returns the new text and how many lines were put in.
    """
    lines = _as_lines(before)
    ending = "\r\n" if "\r\n" in before else "\n"
    new = [line.rstrip("\r\n") + ending for line in _as_lines(new_text)]
    text = "".join(lines[: start - 1] + new + lines[end:])
    if before and not before.endswith(("\n", "\r")) and end < len(lines):
        text = text[:-1]
    return text, len(new)


class FileTools:
    """File actions on one repository; `history` holds, per file, texts for `undo_edit`."""

    def __init__(
        self,
        paths: Confinement,
        *,
        window: int = READ_WINDOW,
        char_limit: int = 16_000,
        names: Callable[[Path], str] | None = None,
    ):
        self.paths = paths
        # How replies name a file to the model (`/testbed/pkg/x.py`); default: relative.
        self.name = names or paths.display
        self.window = window
        self.char_limit = char_limit
        self.history: dict[Path, list[str | None]] = {}

    # -- reading -----------------------------------------------------------------------------

    def read(self, raw: str) -> Observation:
        return self._observe(lambda: self._show(raw, None, header=False))

    def view(self, raw: str, view_range: list[int] | None) -> Observation:
        return self._observe(lambda: self._show(raw, view_range, header=True))

    def _show(self, raw: str, view_range: list[int] | None, *, header: bool) -> str:
        path = self.paths.resolve(raw)
        name = self.name(path)
        if self._is_dir(path):
            if view_range:
                raise ToolError("The `view_range` parameter is not allowed when `path` points to a directory.")
            return self._list_dir(path, name)
        if header:  # str_replace_editor view: SWE-agent's answer
            text = self._text(path, raw)
            problem = view_range and editor_text.view_range_error(view_range, len(text.split("\n")))
            if problem:
                raise ToolError(problem)
            return editor_text.file_view(text, name, view_range)
        lines = _as_lines(self._text(path, raw))
        if not lines:
            return f"[{name} is empty]\n"
        start, end = self._range(view_range, len(lines))
        shown, hint = self._window(lines, start, end, name)
        intro = f"Here's the result of running `cat -n` on {name}:\n" if header else ""
        return intro + numbered(shown, start) + hint

    def _range(self, view_range: list[int] | None, count: int) -> tuple[int, int]:
        if view_range is None:
            return 1, count
        if len(view_range) != 2 or not all(isinstance(v, int) for v in view_range):
            raise ToolError("`view_range` must be a list of two integers, e.g. [10, 40] or [10, -1].")
        start, end = view_range
        if not 1 <= start <= max(count, 1):
            raise ToolError(f"Invalid `view_range` {view_range}: its first element {start} should be "
                            f"within [1, {count}], the file's lines.")
        if end == -1:
            return start, count
        if end < start or end > count:
            raise ToolError(f"Invalid `view_range` {view_range}: its second element {end} should be "
                            f"-1 (to the end) or within [{start}, {count}].")
        return start, end

    def _window(self, lines: list[str], start: int, end: int, name: str) -> tuple[list[str], str]:
        """At most `window` lines and about `char_limit` characters, with a hint for the rest."""
        shown: list[str] = []
        size = 0
        for line in lines[start - 1 : end]:
            cost = min(len(line), LINE_CHAR_LIMIT)
            if shown and (len(shown) >= self.window or size + cost > self.char_limit):
                break
            shown.append(line)
            size += cost
        last = start + len(shown) - 1
        if last >= end:
            return shown, ""
        upto = min(end, last + len(shown))
        return shown, (
            f"[showing lines {start}-{last} of {len(lines)}; see more with the view command and "
            f"view_range [{last + 1}, {upto}], or: sed -n '{last + 1},{upto}p' {name}]\n"
        )

    def _list_dir(self, path: Path, name: str) -> str:
        entries: list[str] = []
        for child in sorted(path.iterdir()):
            if child.name.startswith("."):
                continue
            entries.append(self.name(child))
            if child.is_dir() and not child.is_symlink():
                entries.extend(
                    self.name(sub)
                    for sub in sorted(child.iterdir())
                    if not sub.name.startswith(".")
                )
        cut = ""
        if len(entries) > DIR_ENTRY_LIMIT:
            cut = f"[... {len(entries) - DIR_ENTRY_LIMIT} more entries; list subdirectories one by one]\n"
            entries = entries[:DIR_ENTRY_LIMIT]
        return editor_text.directory_listing(name, entries) + cut

    def _is_dir(self, path: Path) -> bool:
        if path == self.paths.root:
            return True
        try:
            fd = self.paths.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            return False
        try:
            return stat.S_ISDIR(os.fstat(fd).st_mode)
        finally:
            os.close(fd)

    def _text(self, path: Path, raw: str) -> str:
        """The file's text, read through one descriptor opened without following symlinks
        (so what is checked is what is read; a FIFO or device is refused, not waited on)."""
        try:
            fd = self.paths.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            raise ToolError(f"The path {self.name(path)} does not exist. Please provide a valid path.") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError(f"The path {raw} is not a regular file.")
            size = info.st_size
            if size > MAX_TEXT_BYTES:
                raise ToolError(f"{raw} is too large for the file tools ({size} bytes); look at parts "
                                f"of it with bash (head, sed -n, grep -n).")
            data = handle.read(MAX_TEXT_BYTES + 1)
        if b"\0" in data[:8192]:
            raise ToolError(f"{raw} is a binary file ({len(data)} bytes); inspect it with bash "
                            "(e.g. `file`, `xxd | head`).")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{raw} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                            "use bash tools (sed, python) to change it.") from None

    # -- planning changes --------------------------------------------------------------------

    def plan(self, action: Edit | StrReplaceEditor) -> Change:
        """What `action` would do, without doing it. Raises ToolError/PathError on mistakes."""
        change = self._plan(action)
        if change.after is not None:
            require_encodable(change.after, "The new text")
        return change

    def _plan(self, action: Edit | StrReplaceEditor) -> Change:
        if isinstance(action, Edit):
            return self._plan_edit(action)
        planners = {
            "create": self._plan_create,
            "str_replace": self._plan_str_replace,
            "insert": self._plan_insert,
            "undo_edit": self._plan_undo,
        }
        planner = planners.get(action.command)
        if planner is None:
            raise ToolError(f"Unknown command {action.command!r}; use one of: view, "
                            + ", ".join(planners) + ".")
        return planner(action)

    def _writable(self, raw: str) -> tuple[Path, str]:
        path = self.paths.resolve(raw)
        git_dir = self.paths.root / ".git"
        if path == git_dir or path.is_relative_to(git_dir):
            raise ToolError(f"refused {raw!r}: .git belongs to git; change the repository "
                            "with git commands instead.")
        return path, self.name(path)

    def _plan_edit(self, action: Edit) -> Change:
        path, name = self._writable(action.path)
        before = self._text(path, action.path)
        lines = _as_lines(before)
        count = len(lines)
        start, end = action.start, action.end
        if not (1 <= start <= count + 1 and start - 1 <= end <= count):
            raise ToolError(
                f"Invalid line range {start}-{end} for {name}, which has {count} lines: need "
                f"1 <= start <= {count + 1} and start-1 <= end <= {count} "
                "(end = start-1 inserts before line start; empty content deletes the lines)."
            )
        after, added = _splice(before, start, end, action.content)
        what = (f"replaced lines {start}-{end} with {added} line(s)" if end >= start
                else f"inserted {added} line(s) before line {start}")
        reply = f"Edited {name}: {what}. Snippet of the result:\n" + self._snippet(
            _as_lines(after), start, start + added - 1
        ) + _EDITED_TAIL
        return Change(path, before, after, reply)

    def _plan_create(self, action: StrReplaceEditor) -> Change:
        path, name = self._writable(action.path)
        if action.file_text is None:
            raise ToolError("Parameter `file_text` is required for command: create")
        if path.exists():
            raise ToolError(f"File already exists at: {name}. Cannot overwrite files using command "
                            "`create`.")
        return Change(path, None, action.file_text, f"File created successfully at: {name}")

    def _plan_str_replace(self, action: StrReplaceEditor) -> Change:
        path, name = self._writable(action.path)
        if not action.old_str:
            raise ToolError("Parameter `old_str` is required for command: str_replace")
        before = self._text(path, action.path)
        old, new = action.old_str, action.new_str or ""
        starts = _occurrences(before, old)
        if not starts:
            raise ToolError(f"No replacement was performed, old_str `{old}` did not appear "
                            f"verbatim in {name}.")
        if len(starts) > 1:
            lines = [i + 1 for i, line in enumerate(before.split("\n")) if old in line]
            raise ToolError(f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                            f"in lines {lines}. Please ensure it is unique")
        if new == old:
            raise ToolError(f"No replacement was performed, old_str `{old}` is the same as "
                            f"new_str `{new}`.")
        after = before.replace(old, new, 1)
        return Change(path, before, after, editor_text.str_replace_reply(name, before, after, old, new))

    def _plan_insert(self, action: StrReplaceEditor) -> Change:
        path, name = self._writable(action.path)
        if action.insert_line is None:
            raise ToolError("Parameter `insert_line` is required for command: insert")
        if action.new_str is None:
            raise ToolError("Parameter `new_str` is required for command: insert")
        before = self._text(path, action.path)
        lines = _as_lines(before)
        line = action.insert_line
        if not 0 <= line <= len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {line}. It should be within the range "
                            f"of lines of the file: {[0, len(before.split(chr(10)))]}")
        after, added = _splice(before, line + 1, line, action.new_str)
        return Change(path, before, after, editor_text.insert_reply(name, after, line, added))

    def _plan_undo(self, action: StrReplaceEditor) -> Change:
        path, name = self._writable(action.path)
        stack = self.history.get(path)
        if not stack:
            raise ToolError(f"No edit history found for {name}.")
        try:
            before: str | None = self._text(path, action.path)
        except ToolError:
            before = None
        target = stack[-1]
        if target is None:
            return Change(path, before, None, f"Last edit to {name} undone: the file was removed "
                          "(it did not exist before).")
        return Change(path, before, target, f"Last edit to {name} undone successfully. "
                      + editor_text.cat_n(target, name))

    def _snippet(self, lines: list[str], first: int, last: int) -> str:
        start = max(1, first - SNIPPET_CONTEXT)
        stop = min(len(lines), max(last, first) + SNIPPET_CONTEXT)
        return numbered(lines[start - 1 : stop], start)

    # -- applying and previewing -------------------------------------------------------------

    def apply(self, change: Change, *, undoing: bool = False) -> None:
        """Write the change; remember the old text unless this is an undo.

        The file is opened from the repository root without following symlinks
        (`Confinement.open`), so a symlink swapped in since `plan` cannot redirect the write;
        a create never overwrites a file that appeared since (`O_EXCL`).
        """
        if change.after is None:
            try:
                self.paths.unlink(change.path)
            except FileNotFoundError:
                pass
        else:
            self._write(change)
        stack = self.history.setdefault(change.path, [])
        if undoing:
            stack.pop()
        else:
            stack.append(change.before)

    def _write(self, change: Change) -> None:
        assert change.after is not None
        # O_NONBLOCK: a FIFO put in the file's place fails at once instead of hanging the open.
        flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CREAT
        flags |= os.O_EXCL if change.before is None else os.O_TRUNC
        try:
            fd = self.paths.open(change.path, flags, 0o666, make_parents=True)
        except FileExistsError:
            raise ToolError(f"File already exists at: {self.paths.display(change.path)}. It "
                            "appeared after the action was checked; look at it first.") from None
        with os.fdopen(fd, "wb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ToolError(f"{self.paths.display(change.path)} is not a regular file.")
            handle.write(change.after.encode("utf-8"))

    def execute(self, action: Edit | StrReplaceEditor) -> Observation:
        """Run an edit-like action; mistakes come back as observations with `error` set."""
        if isinstance(action, StrReplaceEditor) and action.command == "view":
            return self.view(action.path, action.view_range)

        def run() -> str:
            change = self.plan(action)
            undoing = isinstance(action, StrReplaceEditor) and action.command == "undo_edit"
            self.apply(change, undoing=undoing)
            return change.reply

        return self._observe(run)

    def preview(self, action: Edit | StrReplaceEditor) -> str:
        """The unified diff the action would make, or the error it would hit, as text."""
        try:
            change = self.plan(action)
        except (ToolError, PathError) as exc:
            return f"error: {exc}"
        name = self.paths.display(change.path)
        diff = difflib.unified_diff(
            (change.before or "").splitlines(keepends=True),
            (change.after or "").splitlines(keepends=True),
            fromfile=f"a/{name}" if change.before is not None else "/dev/null",
            tofile=f"b/{name}" if change.after is not None else "/dev/null",
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in diff
        )

    @staticmethod
    def _observe(work: Callable[[], str]) -> Observation:
        try:
            return Observation(output=work(), exit_code=0)
        except (ToolError, PathError) as exc:
            return Observation(output="", error=str(exc))
        except OSError as exc:
            return Observation(output="", error=f"{exc.strerror or exc}: {exc.filename or ''}".strip())


def _occurrences(text: str, needle: str) -> list[int]:
    found, index = [], text.find(needle)
    while index >= 0:
        found.append(index)
        index = text.find(needle, index + 1)
    return found
