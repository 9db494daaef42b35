"""The model's text, streamed token by token into Markdown that follows the end of the stream."""

from __future__ import annotations

import asyncio

from markdown_it import MarkdownIt
from textual.app import ComposeResult
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


class ThoughtStream(VerticalScroll):
    """One Markdown block per model turn; older turns are dropped past `max_turns`.

    `write` and `end_turn` only queue work: a feeder task moves the text into a
    `MarkdownStream` slice by slice, so callers (the screen's event handler) never wait for
    rendering. The container is anchored, so it follows new text until the user scrolls up; a
    `1fr` spacer after the turns keeps short content at the top instead of pinned to the bottom.
    """

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, *, max_turns: int = 30, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_turns = max_turns
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
        self.text = ""
        self._markdown = Markdown(classes="turn", parser_factory=_plain_markdown)
        await self.mount_all([Static(title, classes="turn-title"), self._markdown], before=self._spacer)
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
        if self._stream is None:
            return
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
