"""One model turn's Markdown, streamed in at the screen's frame rate without mounting anything."""

from __future__ import annotations

import time

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown as RichMarkdown
from rich.style import Style
from rich.syntax import Syntax
from rich.theme import Theme
from textual.events import MouseScrollDown, MouseScrollUp
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from widgets._css import css_beside
from widgets.markdown_blocks import LIST_ITEM, MarkdownBlocks

# At most one update per frame of the screen (Textual repaints at most 60 times a second).
FRAME = 1 / 60
# While live, a turn keeps rows ahead of its text: this many from its start (before its first
# token), then 2**GROWTH_BITS times as many each time the text fills them (4, 16, 64, ..., at
# most its container's height). The turn's height, and so the screen's layout, changes once or
# twice per turn instead of with every line: each change lays out the whole screen (25-50 ms
# with 50 turns on a slow machine, the slowest keys of a streamed turn).
FIRST_RESERVED_ROWS = 4
GROWTH_BITS = 2
# After an update that took t seconds, the next waits at least this many t, so a tail that is
# slow to render (a long code block) leaves the loop free for keys most of the time.
BUSY_SHARE = 4


class ShownMarkdown(RichMarkdown):
    """rich's Markdown, with raw HTML kept as text (so `<tool_call>` or `<think>` stay visible
    instead of vanishing) and links shown as text and address, never as terminal hyperlinks.

    Every instance parses with the one shared `PARSER` (rich's own constructor would build a
    new parser each time, which costs more than parsing a frame's text)."""

    PARSER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")

    def __init__(self, markup: str) -> None:  # rich's attributes, set without its parser
        self.markup = markup
        self.parsed = self.PARSER.parse(markup)
        self.code_theme = self.inline_code_theme = "monokai"
        self.justify = None
        self.style = "none"
        self.hyperlinks = False
        self.inline_code_lexer = None


class DraftCodeBlock(CodeBlock):
    """A code block still being written: not highlighted yet (highlighting a long block costs
    several times more, and it would be redone every frame), and without the blank line rich
    pads a block with above and below, so the block's lines drawn so far and its next line can
    be rendered apart and stacked."""

    @classmethod
    def create(cls, markdown: RichMarkdown, token: Token) -> DraftCodeBlock:
        return cls("text", markdown.code_theme)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Syntax(str(self.text).rstrip(), "text", theme=self.theme, word_wrap=True, padding=(0, 1))


class DraftMarkdown(ShownMarkdown):
    """`ShownMarkdown` for the block still being written."""

    elements = {**ShownMarkdown.elements, "fence": DraftCodeBlock, "code_block": DraftCodeBlock}


class TurnText(Widget):
    """Markdown that grows at its end (`append`), drawn line by line (the Line API).

    Text is taken in at most once per frame, all that arrived since the last frame at once.
    Finished blocks (see `MarkdownBlocks`) are rendered once for the width they are shown at;
    only the block still being written is rendered again (its code not highlighted until done),
    and of that block, what comes before its last list item or code line only when a line
    completes (`MarkdownBlocks.cut`): a frame renders the item or line being written.
    While `live`, the widget keeps blank rows below its text (`FIRST_RESERVED_ROWS` from the
    start, four times as many each time the text fills them), grows no taller than its
    container's viewport and then shows its last lines (the mouse wheel scrolls back within
    it): a frame that adds a line into rows already kept repaints this widget alone instead of
    laying out the screen, and paints again only the lines from the first one that changed.
    `finish` shows it at full height, without blank rows. `painted_length` says how much of
    `source` was on screen in the last frame that showed the end of the text.
    """

    DEFAULT_CSS = css_beside(__file__)
    COMPONENT_CLASSES = {"turn-text--code"}  # inline code, styled by the app's theme

    def __init__(self, text: str = "", *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._blocks = MarkdownBlocks()
        self._pending: list[str] = [text] if text else []
        self._width = 0  # the width the lines below were rendered for (0: none yet)
        self._fixed: list[Strip] = []  # the finished blocks' lines, a blank line between blocks
        self._rendered_blocks = 0  # how many finished blocks `_fixed` holds
        self._tail: list[Strip] = []
        self._tail_text: str | None = None  # the tail `_tail` shows (None: render it again)
        self._head: list[Strip] = []  # the tail's lines before its cut ...
        self._head_text: str | None = None  # ... rendered from this text
        self._theme: tuple[Style, Theme] | None = None  # inline code's style, as a rich Theme
        self._rendered_length = 0  # characters of the source the lines show
        self.painted_length = 0
        self.live = True
        self._cap = 0  # the tallest the widget may be while live (its container's height)
        self._scrolled_back = 0  # lines between the last one shown and the end, while live
        self._scheduled = False  # an update is due (`_timer` or a callback)
        self._timer: Timer | None = None
        self._next_update = 0.0

    @property
    def source(self) -> str:
        """All the text given, shown or about to be."""
        return self._blocks.text + "".join(self._pending)

    @property
    def catching_up(self) -> bool:
        """True while text is waiting for the next frame."""
        return bool(self._pending)

    def append(self, text: str) -> None:
        """Add `text` at the end; it is shown with the next frame."""
        if not text:
            return
        self._pending.append(text)
        if self._scheduled or not self.is_mounted:
            return
        self._scheduled = True
        delay = self._next_update - time.perf_counter()
        if delay > 0:
            self._timer = self.set_timer(delay, self._on_frame, name="turn-text")
        else:  # after what the loop holds now, so text arriving with this is taken in too
            self.call_later(self._on_frame)

    def replace(self, text: str) -> None:
        """Show `text` instead of everything so far."""
        self._blocks = MarkdownBlocks()
        self._pending = [text]
        self._fixed, self._rendered_blocks, self._tail, self._tail_text = [], 0, [], None
        if self.is_mounted:
            self.update_now()

    def finish(self) -> None:
        """The turn is over: show what is waiting and every line (full height)."""
        self.live, self._scrolled_back = False, 0
        self._tail_text = None  # rendered again, code highlighted
        if self.is_mounted:
            self.update_now()
            self.refresh(layout=True)

    def on_mount(self) -> None:
        if self._pending:
            self.update_now()

    def notify_style_update(self) -> None:
        """Colours changed (a theme, a class): render every line again."""
        super().notify_style_update()
        self._width, self._theme = 0, None

    def _on_frame(self) -> None:
        if self._scheduled:
            self.update_now()

    def update_now(self) -> None:
        """Take in the text waiting and re-render what it changed (called once per frame)."""
        self._scheduled = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        started = time.perf_counter()
        height, top, shown = self._height, self._top, self._fixed + self._tail
        self._take_pending()
        width = self.content_size.width
        if width:
            self._bring_up_to_date(width)
        if self._height != height or not width:
            self.refresh(layout=True)
        elif self._top != top:  # a live turn capped at the view: every line it shows moved
            self.refresh()
        else:  # only the lines from the first one that changed to the end of the text
            first = max(_first_changed(shown, self._fixed + self._tail) - top, 0)
            end = min(max(len(shown), self._line_count) - top, self._height)  # below: kept blank
            if first < end:
                self.refresh(Region(0, first, width, end - first))
        finished = time.perf_counter()
        self._next_update = finished + max(FRAME - (finished - started), BUSY_SHARE * (finished - started))

    def _take_pending(self) -> None:
        if self._pending:
            self._blocks.add("".join(self._pending))
            self._pending.clear()
            self._tail_text = None

    @property
    def _line_count(self) -> int:
        return len(self._fixed) + len(self._tail)

    @property
    def _height(self) -> int:
        """Rows the widget is tall: every line; while live, the rows reserved for its text so
        far, at most `_cap`."""
        lines = self._line_count
        if not (self.live and self._cap > 0):
            return lines
        blocks = -(-max(lines, 1) // FIRST_RESERVED_ROWS)  # as many rows as the first ones, needed
        growths = -(-(blocks - 1).bit_length() // GROWTH_BITS)
        return min(FIRST_RESERVED_ROWS << GROWTH_BITS * growths, self._cap)

    @property
    def _top(self) -> int:
        """The first line shown."""
        return max(self._line_count - self._height - self._scrolled_back, 0)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._cap = container.height
        self._bring_up_to_date(width)
        return self._height

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        self._bring_up_to_date(width)
        index = self._top + y
        if index >= self._line_count - 1:
            self.painted_length = self._rendered_length
        fixed = len(self._fixed)
        if index < fixed:
            return self._fixed[index]
        if index - fixed < len(self._tail):
            return self._tail[index - fixed]
        return Strip.blank(width, self.rich_style)

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        """Scroll back within a live turn taller than the view; at its top, the view scrolls."""
        if self._top > 0:
            event.stop()
            self._scrolled_back = min(self._scrolled_back + 3, self._line_count - self._height)
            self.refresh()

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        if self._scrolled_back > 0:
            event.stop()
            self._scrolled_back = max(self._scrolled_back - 3, 0)
            self.refresh()

    def _bring_up_to_date(self, width: int) -> None:
        """Bring the lines up to date for `width`: new finished blocks, then the tail."""
        if width <= 0:
            return
        if width != self._width:
            self._width, self._fixed, self._rendered_blocks, self._tail_text = width, [], 0, None
            self._head_text, self._scrolled_back = None, 0
        lines_before = self._line_count
        blocks = self._blocks
        for block in blocks.finished[self._rendered_blocks :]:
            if self._fixed:
                self._fixed.append(Strip.blank(width, self.rich_style))
            self._fixed.extend(self._lines(block, width))
        self._rendered_blocks = len(blocks.finished)
        tail = blocks.tail
        if tail != self._tail_text:
            lines = self._tail_lines(tail, width) if self.live else self._markdown_lines(tail, width)
            if lines and self._fixed:
                lines.insert(0, Strip.blank(width, self.rich_style))
            self._tail, self._tail_text = lines, tail
        self._rendered_length = len(blocks.text)
        if self._scrolled_back:  # keep the lines the user scrolled back to in view
            self._scrolled_back += self._line_count - lines_before

    def _tail_lines(self, tail: str, width: int) -> list[Strip]:
        """The live tail's lines: those before its cut as rendered when the cut last moved, then
        its last item (in the code block it is part of, if any) rendered now, as a draft."""
        cut, fence = self._blocks.cut
        head, item = tail[:cut], tail[cut:]
        if head != self._head_text:
            self._head, self._head_text = self._markdown_lines(head, width, draft=True), head
        lines: list[Strip] = []
        if item.strip():
            lines = self._markdown_lines(f"{fence}\n{item}" if fence else item, width, draft=True)
        if lines and self._head and not fence and not _in_list(head):
            lines.insert(0, Strip.blank(width, self.rich_style))  # as between a paragraph and a list
        return self._head + lines

    def _markdown_lines(self, markup: str, width: int, draft: bool = False) -> list[Strip]:
        shown = markup.strip("\n")
        return self._lines(shown, width, draft) if shown.strip() else []

    def _code_theme(self) -> Theme:
        style = self.get_component_rich_style("turn-text--code")
        if self._theme is None or self._theme[0] != style:
            self._theme = style, Theme({"markdown.code": style})
        return self._theme[1]

    def _lines(self, markup: str, width: int, draft: bool = False) -> list[Strip]:
        console = self.app.console
        options = console.options.update(width=width, height=None, highlight=False)
        style = self.rich_style
        console.push_theme(self._code_theme())
        try:
            markdown = DraftMarkdown(markup) if draft else ShownMarkdown(markup)
            rendered = console.render_lines(markdown, options, style=style, pad=True)
        finally:
            console.pop_theme()
        # rich opens a list with an empty line; the blank line between blocks is enough.
        while rendered and all(not seg.text.strip() and (seg.style is None or seg.style.bgcolor == style.bgcolor)
                               for seg in rendered[0]):
            del rendered[0]
        return [Strip(line, width) for line in rendered]


def _first_changed(before: list[Strip], after: list[Strip]) -> int:
    """The index of the first line of `after` that is not the very strip `before` had there
    (lines kept from one render to the next are the same objects)."""
    for index, (old, new) in enumerate(zip(before, after)):
        if old is not new:
            return index
    return min(len(before), len(after))


def _in_list(text: str) -> bool:
    """True when the last line of `text` with words on it belongs to a list item."""
    last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
    return bool(LIST_ITEM.match(last)) or last[:1] in (" ", "\t")
