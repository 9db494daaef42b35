"""A unified diff, split per file, syntax-highlighted; big diffs are prepared in a thread."""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.containers import VerticalScroll
from textual.content import Content
from pygments.token import Token
from textual.highlight import HighlightTheme, highlight
from textual.widgets import Static

from agent_core.binary_shown import binary_shown
from agent_core.sanitize import visible
from agent_core.steps import StepRecord
from widgets._css import css_beside

# Diffs longer than this (characters) are highlighted in a worker thread, not on the UI's loop.
THREAD_THRESHOLD = 20_000
# Files shown per diff; the rest are counted in a last line.
MAX_FILES = 100


class DiffTheme(HighlightTheme):
    """Textual's highlight theme plus colours for added and removed lines."""

    STYLES = {
        **HighlightTheme.STYLES,
        Token.Generic.Inserted: "$text-success on $success-muted",
        Token.Generic.Deleted: "$text-error on $error-muted",
    }


def highlight_diff(diff: str) -> Content:
    """A unified diff as highlighted Content."""
    return highlight(visible(diff), language="diff", theme=DiffTheme)


@dataclass
class FileDiff:
    """The part of a unified diff that concerns one file."""

    path: str
    added: int
    removed: int
    text: str


def _path_of(header: str) -> str:
    """`diff --git a/x b/y` -> `y` (good enough for display; quoted paths keep their quotes)."""
    parts = header.split(" b/", 1)
    return parts[1] if len(parts) == 2 else header.removeprefix("diff --git ").strip()


def split_diff(diff: str) -> list[FileDiff]:
    """Split a `git diff` output into per-file pieces with their added/removed line counts."""
    files: list[FileDiff] = []
    current: list[str] = []

    def flush() -> None:
        if not current:
            return
        body = current[1:] if current[0].startswith("diff --git ") else current
        added = sum(1 for line in body if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in body if line.startswith("-") and not line.startswith("---"))
        path = _path_of(current[0]) if current[0].startswith("diff --git ") else "(diff)"
        files.append(FileDiff(path, added, removed, "\n".join(current)))

    for line in diff.splitlines():
        if line.startswith("diff --git ") and current:
            flush()
            current = []
        current.append(line)
    flush()
    return files


def render_file(file: FileDiff, max_lines: int) -> tuple[Content, Content]:
    """Title and highlighted body of one file's diff, trimmed to `max_lines` lines."""
    title = Content.from_markup(
        "[b]$path[/b]  [$text-success]+$added[/] [$text-error]-$removed[/]",
        path=visible(file.path), added=file.added, removed=file.removed,
    )
    lines = file.text.splitlines()
    first_hunk = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
    if first_hunk is not None:
        lines = lines[first_hunk:]
    shown = "\n".join(lines[:max_lines])
    body = highlight_diff(shown)
    if len(lines) > max_lines:
        body = body.append(Content.styled(f"\n… {len(lines) - max_lines} more lines", "italic"))
    return title, body


class DiffView(VerticalScroll):
    """Shows a diff file by file; `set_diff` may be called as often as diffs change.

    While the view is hidden (e.g. in a tab not shown) a new diff is only noted; it is prepared
    and shown when the view appears. Showing a diff with the same number of files as the one
    before updates the widgets in place instead of mounting new ones.
    """

    DEFAULT_CSS = css_beside(__file__)

    def __init__(
        self, *, empty_text: str = "No changes.", max_lines_per_file: int = 400,
        diff: str = "", id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.empty_text = empty_text
        self.max_lines_per_file = max_lines_per_file
        self.diff = diff
        self.files: list[FileDiff] = []  # the files of the diff on screen
        self._stale = True  # `diff` is not on screen yet

    def on_mount(self) -> None:
        self.set_diff(self.diff)

    def on_show(self) -> None:
        if self._stale:
            self.set_diff(self.diff)

    def set_diff(self, diff: str) -> None:
        """Show `diff` (may be empty)."""
        self.diff = diff
        self._stale = True
        if self._hidden:
            return
        self._stale = False
        if len(diff) > THREAD_THRESHOLD:
            self._prepare_in_thread(diff)
        else:
            self._show(*self._prepare(diff))

    def show_record(self, record: StepRecord) -> None:
        """Show what the step changed."""
        self.set_diff(record.diff)

    @property
    def _hidden(self) -> bool:
        """Not displayed, or inside something not displayed (a tab not shown)."""
        return any(not node.display for node in self.ancestors_with_self)

    def _prepare(self, diff: str) -> tuple[list[FileDiff], list[tuple[Content, Content]]]:
        files = split_diff(binary_shown(diff))
        return files, [render_file(f, self.max_lines_per_file) for f in files[:MAX_FILES]]

    @work(thread=True, exclusive=True, group="diff-render", exit_on_error=False)
    def _prepare_in_thread(self, diff: str) -> None:
        files, parts = self._prepare(diff)
        self.app.call_from_thread(self._show_if_current, diff, files, parts)

    def _show_if_current(
        self, diff: str, files: list[FileDiff], parts: list[tuple[Content, Content]]
    ) -> None:
        if diff is self.diff:
            self._show(files, parts)

    def _show(self, files: list[FileDiff], parts: list[tuple[Content, Content]]) -> None:
        if not self.is_attached:
            return  # the screen is going away (e.g. the app exits while a diff arrives)
        self.files = files
        shown: list[tuple[str, Content | str]] = []
        for title, body in parts:
            shown += [("file-title", title), ("file-body", body)]
        if not parts:
            shown.append(("empty", self.empty_text))
        elif len(files) > len(parts):
            more = len(files) - len(parts)
            shown.append(("empty", f"… {more} more file(s); save the patch to see them all"))
        current = list(self.query_children(Static))
        if [w.classes for w in current] == [frozenset({kind}) for kind, _ in shown]:
            for widget, (_, content) in zip(current, shown):
                widget.update(content)
        else:
            self.remove_children()
            self.mount_all(Static(content, classes=kind) for kind, content in shown)
        self.scroll_home(animate=False)
