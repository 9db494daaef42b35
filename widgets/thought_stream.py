"""The model's text, streamed token by token into Markdown that follows the end of the stream."""

from __future__ import annotations

import asyncio

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from agent_core.sanitize import visible
from widgets._css import css_beside

# Text is handed to the Markdown stream at most this many characters at a time, the next slice
# only once the Markdown has taken the last one in, so a backlog (a model faster than the screen)
# never blocks the UI for longer than one slice takes to render.
SLICE = 1_000

# Thoughts longer than this (characters) keep their streamed form at the end of a turn.
REPLACE_LIMIT = 8_000


def _plain_markdown() -> MarkdownIt:
    """GFM-like Markdown with raw HTML shown as text, so `<tool_call>` and `<think>` stay visible,
    and without linkify (bare-URL detection), which costs most of the parse of streamed text."""
    return MarkdownIt("gfm-like", options_update={"html": False, "linkify": False})


class FoldedTurn(Static, can_focus=True):
    """A finished turn folded to one line (its title and first line); Enter or a click unfolds
    it to its full text (plain, not Markdown: a few cheap widgets however long the session)."""

    BINDINGS = [Binding("enter", "toggle", "Unfold", id="thought_stream.toggle_turn")]

    def __init__(self, title: str, text: str) -> None:
        self.title = title
        self.full_text = text.strip()
        first = next((line.strip() for line in self.full_text.splitlines() if line.strip()), "")
        self.line = f"▸ {title}" + (f" · {first}" if first else "")
        super().__init__(self.line, classes="turn-title -folded", markup=False)
        self.tooltip = "Enter or click: show this turn in full"

    @property
    def folded(self) -> bool:
        return self.has_class("-folded")

    def action_toggle(self) -> None:
        folded = not self.folded
        self.set_class(folded, "-folded")
        self.update(self.line if folded else f"▾ {self.title}\n{self.full_text}")

    def on_click(self) -> None:
        self.action_toggle()


class ThoughtStream(VerticalScroll):
    """One Markdown block per model turn; the last `open_turns` stay Markdown, older ones are
    folded to one line each (`FoldedTurn`), and turns past `max_turns` are dropped, so the
    widgets mounted stay few however long the session runs.

    `write` and `end_turn` only queue work: a feeder task moves the text into a
    `MarkdownStream` slice by slice, so callers (the screen's event handler) never wait for
    rendering. The container is anchored, so it follows new text until the user scrolls up; a
    `1fr` spacer after the turns keeps short content at the top instead of pinned to the bottom.
    """

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, *, max_turns: int = 30, open_turns: int = 2, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_turns = max_turns
        self.open_turns = max(open_turns, 1)
        self._opened: list[tuple[Static, Markdown]] = []  # turns shown in full, oldest first
        self.text = ""
        self._markdown: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._backlog: list[str] = []
        self._ending: tuple[bool, str | None] | None = None
        self._feeder: asyncio.Task[None] | None = None
        self._spacer = Static(classes="spacer")

    @property
    def rendering(self) -> bool:
        """True while streamed text is still on its way into the Markdown."""
        return self._feeder is not None and not self._feeder.done()

    def compose(self) -> ComposeResult:
        yield self._spacer

    def on_mount(self) -> None:
        self.anchor()

    async def begin_turn(self, title: str) -> None:
        """Start a new block for a model turn titled `title` (after the last one is rendered)."""
        await self.end_turn()
        await self.settled()
        await self._fold(self.open_turns - 1)
        self.text = ""
        self._markdown = Markdown(classes="turn", parser_factory=_plain_markdown)
        heading = Static(title, classes="turn-title")
        await self.mount_all([heading, self._markdown], before=self._spacer)
        self._opened.append((heading, self._markdown))
        self._stream = Markdown.get_stream(self._markdown)
        await self._trim()

    async def write(self, fragment: str) -> None:
        """Queue streamed model text for the current turn."""
        if self._stream is None:
            await self.begin_turn("Model")
        self.text += fragment
        self._backlog.append(visible(fragment))
        self._kick()

    async def end_turn(self, thought: str | None = None) -> None:
        """Finish the current turn once its text is rendered; a given `thought` then replaces the
        raw streamed text (tool-call markup and all) unless it is too long to re-render quickly."""
        if self._stream is None or (thought is None and self._ending is not None):
            return  # (a plain end never cancels a queued end that replaces the text)
        replace = thought is not None and len(thought) <= REPLACE_LIMIT
        if replace:
            self.text = thought or ""
        self._ending = (replace, None if thought is None else visible(thought))
        self._kick()

    async def settled(self) -> None:
        """Wait until everything queued is rendered."""
        while self._feeder is not None and not self._feeder.done():
            await asyncio.shield(self._feeder)

    async def note(self, text: str, variant: str = "info") -> None:
        """A line that is not model text: a rejection, a user message, a format error."""
        await self.end_turn()
        await self.settled()
        await self.mount(Static(visible(text), classes=f"note -{variant}", markup=False), before=self._spacer)
        await self._trim()

    async def on_unmount(self) -> None:
        """Leave no task behind: a pending feeder or stream would be torn down by the collector."""
        if self._feeder is not None and not self._feeder.done():
            self._feeder.cancel()
        self._backlog.clear()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    def _kick(self) -> None:
        if self._feeder is None or self._feeder.done():
            self._feeder = asyncio.create_task(self._feed())

    async def _feed(self) -> None:
        while self._backlog:
            pending = "".join(self._backlog)
            self._backlog = [pending[SLICE:]] if len(pending) > SLICE else []
            if self._stream is not None and self._markdown is not None:
                await self._handed_over(self._stream, self._markdown, pending[:SLICE])
        if self._ending is not None and self._stream is not None:
            replace, thought = self._ending
            self._ending = None
            stream, self._stream = self._stream, None
            await stream.stop()
            if replace and self._markdown is not None:
                await self._markdown.update((thought or "").strip() or "*(no thought, only an action)*")

    @staticmethod
    async def _handed_over(stream: MarkdownStream, markdown: Markdown, piece: str) -> None:
        """Write `piece` to the stream and wait until the Markdown has rendered it."""
        target = len(markdown.source) + len(piece)
        await stream.write(piece)
        while len(markdown.source) < target:
            await asyncio.sleep(0)
        await asyncio.sleep(0)
        async with markdown.lock:
            pass

    async def _fold(self, keep: int) -> None:
        """Fold all but the last `keep` turns still shown in full."""
        while len(self._opened) > keep:
            heading, markdown = self._opened.pop(0)
            if not heading.is_attached:
                continue
            folded = FoldedTurn(str(heading.render()), markdown.source)
            await self.mount(folded, before=heading)
            await self.remove_children([heading, markdown])

    async def _trim(self) -> None:
        titles = list(self.query(".turn-title"))
        excess = len(titles) - self.max_turns
        if excess <= 0:
            return
        cutoff = titles[excess]
        doomed = []
        for child in self.children:
            if child is cutoff:
                break
            doomed.append(child)
        await self.remove_children(doomed)
