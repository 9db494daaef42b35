"""Unified diffs, split per file, syntax-highlighted, drawn line by line; big diffs are prepared
in a thread."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar

from pygments.token import Token
from textual.content import Content
from textual.geometry import Offset, Region, Size
from textual.highlight import HighlightTheme, highlight
from textual.scroll_view import ScrollView
from textual.strip import Strip

from agent_core.binary_shown import binary_shown
from agent_core.sanitize import visible
from agent_core.steps import StepRecord
from widgets._css import css_beside
from widgets.steady_scrollbars import SteadyScrollbars

# Diffs longer than this (characters) are highlighted in a worker thread, not on the UI's loop.
THREAD_THRESHOLD = 20_000
# Files shown per diff; the rest are counted in a last line.
MAX_FILES = 100
# Blank cells left and right of every line.
PAD = 1


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


@dataclass
class DiffLine:
    """One line of a shown diff: a file's title, a line of its body, or a note (no changes, files
    left out)."""

    kind: str  # "title", "body" or "note"
    content: Content


def diff_lines(parts: list[tuple[Content, Content]], files: int, empty_text: str) -> list[DiffLine]:
    """The lines that show the rendered files `parts` of a diff of `files` files."""
    lines: list[DiffLine] = []
    for title, body in parts:
        lines.append(DiffLine("title", title))
        lines += [DiffLine("body", line) for line in body.split("\n")]
    if not parts:
        lines.append(DiffLine("note", Content(empty_text)))
    elif files > len(parts):
        more = f"… {files - len(parts)} more file(s); save the patch to see them all"
        lines.append(DiffLine("note", Content(more)))
    return lines


@dataclass
class DiffDocument:
    """One of a view's diffs: its text, its files and lines once prepared, where it was scrolled."""

    empty_text: str
    diff: str = ""
    files: list[FileDiff] = field(default_factory=list)  # the files of the diff on screen
    lines: list[DiffLine] = field(default_factory=list)
    width: int = 0  # the widest line, with its padding
    stale: bool = True  # `diff` is not prepared yet
    scroll: Offset = Offset(0, 0)
    strips: dict[int, Strip] = field(default_factory=dict)  # lines drawn, by position


class DiffView(SteadyScrollbars, can_focus=True):
    """Shows one of its named diffs (`documents`: name -> what it says when empty) file by file;
    `set_diff` may be called as often as diffs change, `show` picks the one on screen.

    The view is one Line API widget whatever it shows: showing another of its diffs repaints it
    and lays out nothing (unless a scrollbar comes or goes), so switching between the step's and
    the session's diff costs a repaint, not a layout of the screen. A diff set while it is not on
    screen (another one shown, or the view hidden) is only noted; it is prepared when it appears.
    Each diff keeps its own scroll position; a new diff starts at the top.
    """

    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--title", "diff-view--body", "diff-view--note",
    }

    def __init__(
        self, *, documents: Mapping[str, str] | None = None, diff: str = "",
        max_lines_per_file: int = 400, id: str | None = None,
    ) -> None:
        """`diff`: what the first document holds at the start."""
        super().__init__(id=id)
        names = documents or {"diff": "No changes."}
        self.documents = {name: DiffDocument(empty) for name, empty in names.items()}
        self.shown = next(iter(self.documents))
        self.document.diff = diff
        self.max_lines_per_file = max_lines_per_file

    # --- what is shown --------------------------------------------------------------------

    @property
    def document(self) -> DiffDocument:
        """The diff on screen."""
        return self.documents[self.shown]

    @property
    def diff(self) -> str:
        return self.document.diff

    @property
    def files(self) -> list[FileDiff]:
        return self.document.files

    @property
    def file_titles(self) -> list[str]:
        """The titles of the files on screen, as plain text."""
        return [line.content.plain for line in self.document.lines if line.kind == "title"]

    def set_diff(self, diff: str, name: str | None = None) -> None:
        """Make `diff` (may be empty) the content of diff `name` (the first one by default)."""
        document = self.documents[name or next(iter(self.documents))]
        document.diff, document.stale, document.scroll = diff, True, Offset(0, 0)
        if document is self.document:
            self._prepare_shown()

    def show_record(self, record: StepRecord, name: str | None = None) -> None:
        """Show what the step changed."""
        self.set_diff(record.diff, name)

    def show(self, name: str) -> None:
        """Put diff `name` on screen, where it was scrolled when it was last shown. Only the rows
        that differ from what was on screen are painted again (the two diffs often share files:
        after one step they are the same)."""
        if name == self.shown:
            return
        unseen = self._hidden or not self.is_mounted
        before = [] if unseen else self._rows()
        self.document.scroll = self.scroll_offset
        self.shown = name
        document = self.document
        if document.stale and (unseen or len(document.diff) > THREAD_THRESHOLD):
            self._prepare_shown()
            return
        if document.stale:
            document.stale = False
            self._take(document, document.diff, *self._prepare(document.diff, document.empty_text))
        self._fit(document, repaint=False)
        if not unseen:
            width = self.scrollable_content_region.width
            for y, (old, new) in enumerate(zip(before, self._rows())):
                if old != new:
                    self.refresh(Region(0, y, width, 1))

    def on_mount(self) -> None:
        self._prepare_shown()

    def on_show(self) -> None:
        if self.document.stale:
            self._prepare_shown()

    @property
    def _hidden(self) -> bool:
        """Not displayed, or inside something not displayed (a tab not shown)."""
        return any(not node.display for node in self.ancestors_with_self)

    # --- preparing ------------------------------------------------------------------------

    def _prepare_shown(self) -> None:
        document = self.document
        if not self.is_mounted or self._hidden:
            return
        document.stale = False
        if len(document.diff) > THREAD_THRESHOLD:  # (one worker per document: another's goes on)
            self.run_worker(partial(self._prepare_in_thread, document, document.diff),
                            thread=True, exclusive=True, group=f"diff-render-{id(document)}",
                            exit_on_error=False)
        else:
            files, lines = self._prepare(document.diff, document.empty_text)
            self._prepared(document, document.diff, files, lines)

    def _prepare(self, diff: str, empty_text: str) -> tuple[list[FileDiff], list[DiffLine]]:
        files = split_diff(binary_shown(diff))
        parts = [render_file(f, self.max_lines_per_file) for f in files[:MAX_FILES]]
        return files, diff_lines(parts, len(files), empty_text)

    def _prepare_in_thread(self, document: DiffDocument, diff: str) -> None:
        files, lines = self._prepare(diff, document.empty_text)
        self.app.call_from_thread(self._prepared, document, diff, files, lines)

    def _prepared(self, document: DiffDocument, diff: str, files: list[FileDiff],
                  lines: list[DiffLine]) -> None:
        if self._take(document, diff, files, lines) and document is self.document:
            self._fit(document)

    def _take(self, document: DiffDocument, diff: str, files: list[FileDiff],
              lines: list[DiffLine]) -> bool:
        """Keep the prepared `files` and `lines` of `diff` in `document`, unless a newer diff
        came meanwhile or the screen is going away."""
        if diff is not document.diff or not self.is_attached:
            return False
        document.files, document.lines, document.strips = files, lines, {}
        document.width = max((line.content.cell_length for line in lines), default=0) + 2 * PAD
        return True

    def _fit(self, document: DiffDocument, repaint: bool = True) -> None:
        """The scrollable size and position follow `document`, without laying out the screen
        (the view's own size does not depend on its lines); a scrollbar that comes or goes asks
        for a layout (Textual does it), a new position repaints the view (Textual does it)."""
        size = Size(document.width, len(document.lines))
        self.set_reactive(ScrollView.virtual_size, size)
        self._refresh_scrollbars()
        self._scroll_update(size)
        self.scroll_x, self.scroll_y = document.scroll.x, document.scroll.y
        if repaint:
            self.refresh()

    def _rows(self) -> list[Strip]:
        """What each row of the view shows now."""
        return [self.render_line(y) for y in range(self.scrollable_content_region.height)]

    # --- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        document = self.document
        position = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if position >= len(document.lines):
            return Strip.blank(width, self.get_visual_style("diff-view--body").rich_style)
        line = document.lines[position]
        style = self.get_visual_style(f"diff-view--{line.kind}").rich_style
        strip = document.strips.get(position)
        if strip is None:
            strip = document.strips[position] = self._draw(line)
        x = self.scroll_offset.x
        return strip.crop_extend(x, x + width, style)

    def _draw(self, line: DiffLine) -> Strip:
        """`line` at its own width, padded, not wrapped (the view scrolls sideways); a title's or a
        note's style fills the rest of the row."""
        style = self.get_visual_style(f"diff-view--{line.kind}")
        drawn = Content.to_strips(self, line.content, max(1, line.content.cell_length), 1, style)[0]
        pad = Strip.blank(PAD, style.rich_style)
        return Strip.join([pad, drawn, pad])

    def notify_style_update(self) -> None:
        super().notify_style_update()
        for document in self.documents.values():
            document.strips.clear()
