"""The model's text, streamed token by token into Markdown that follows the end of the stream."""

from __future__ import annotations

import asyncio
from collections import deque

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import MountError
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

    `begin_turn`, `write`, `end_turn` and `note` queue work that a feeder task carries out in
    order, moving text into a `MarkdownStream` slice by slice. `begin_turn` and `note` wait
    for it only while at most one slice of text is queued, so callers (the screen's event
    handler) never wait behind a backlog; `settled()` waits for everything. The container is anchored, so
    it follows new text until the user scrolls up; a `1fr` spacer after the turns keeps short
    content at the top instead of pinned to the bottom.
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
        self._open = False  # a turn accepts text (as seen by callers; the feeder may lag)
        self._ops: deque[tuple] = deque()  # ("begin", title) | ("text", s) | ("end", replace,
        # thought) | ("note", text, variant), carried out in order by the feeder
        self._feeder: asyncio.Task[None] | None = None
        self._spacer = Static(classes="spacer")

    @property
    def rendering(self) -> bool:
        """True while queued text or turns are still on their way to the screen."""
        return self._feeder is not None and not self._feeder.done()

    def compose(self) -> ComposeResult:
        yield self._spacer

    def on_mount(self) -> None:
        self.anchor()

    async def begin_turn(self, title: str) -> None:
        """Start a new block for a model turn titled `title` (once what is queued is shown)."""
        await self.end_turn()
        self.text = ""
        self._open = True
        self._queue(("begin", title))
        await self._caught_up()

    async def write(self, fragment: str) -> None:
        """Queue streamed model text for the current turn."""
        if not self._open:
            await self.begin_turn("Model")
        self.text += fragment
        self._queue(("text", visible(fragment)))

    async def end_turn(self, thought: str | None = None) -> None:
        """Finish the current turn once its text is shown; a given `thought` then replaces the
        raw streamed text (tool-call markup and all) unless it is too long to re-render quickly."""
        if not self._open:
            return
        self._open = False
        replace = thought is not None and len(thought) <= REPLACE_LIMIT
        if replace:
            self.text = thought or ""
        self._queue(("end", replace, None if thought is None else visible(thought)))

    async def settled(self) -> None:
        """Wait until everything queued is shown."""
        while self._feeder is not None and not self._feeder.done():
            await asyncio.shield(self._feeder)

    async def note(self, text: str, variant: str = "info") -> None:
        """A line that is not model text: a rejection, a user message, a format error; shown
        after what is queued before it."""
        await self.end_turn()
        self._queue(("note", visible(text), variant))
        await self._caught_up()

    async def on_unmount(self) -> None:
        """Leave no task behind: a pending feeder or stream would be torn down by the collector."""
        if self._feeder is not None and not self._feeder.done():
            self._feeder.cancel()
        self._ops.clear()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    async def _caught_up(self) -> None:
        """Wait for the queue to be shown when that takes at most one slice of text, so a screen
        that keeps up sees each turn and note at once; behind a backlog, return at once."""
        if sum(len(op[1]) for op in self._ops if op[0] == "text") <= SLICE:
            await self.settled()

    def _queue(self, op: tuple) -> None:
        self._ops.append(op)
        if self._feeder is None or self._feeder.done():
            self._feeder = asyncio.create_task(self._feed())

    async def _feed(self) -> None:
        """Carry out the queued operations in order; text goes in slices (see SLICE). Once the
        stream is off the screen (its screen replaced), what is left is dropped."""
        while self._ops:
            if not self.is_attached:
                self._ops.clear()
                return
            try:
                await self._carry_out(self._ops.popleft())
            except MountError:
                self._ops.clear()
                return

    async def _carry_out(self, op: tuple) -> None:
        """One queued operation (see `_ops`)."""
        kind = op[0]
        if kind == "text":
            pending = [op[1]]
            while self._ops and self._ops[0][0] == "text" and sum(map(len, pending)) < SLICE:
                pending.append(self._ops.popleft()[1])
            text = "".join(pending)
            if len(text) > SLICE:
                self._ops.appendleft(("text", text[SLICE:]))
            if self._stream is not None and self._markdown is not None:
                await self._handed_over(self._stream, self._markdown, text[:SLICE])
        elif kind == "begin":
            await self._finish_turn(False, None)
            await self._start_turn(op[1])
        elif kind == "end":
            await self._finish_turn(op[1], op[2])
        else:
            await self._finish_turn(False, None)
            note = Static(op[1], classes=f"note -{op[2]}", markup=False)
            await self.mount(note, before=self._spacer)
            await self._trim()

    async def _start_turn(self, title: str) -> None:
        await self._fold(self.open_turns - 1)
        self._markdown = Markdown(classes="turn", parser_factory=_plain_markdown)
        heading = Static(title, classes="turn-title")
        await self.mount_all([heading, self._markdown], before=self._spacer)
        self._opened.append((heading, self._markdown))
        self._stream = Markdown.get_stream(self._markdown)
        await self._trim()

    async def _finish_turn(self, replace: bool, thought: str | None) -> None:
        if self._stream is None:
            return
        stream, self._stream = self._stream, None
        try:
            await stream.stop()
        except asyncio.CancelledError:
            # A stream stopped before its task first ran re-raises that task's cancellation.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
        if replace and self._markdown is not None and self._markdown.is_attached:
            await self._markdown.update((thought or "").strip() or "*(no thought, only an action)*")

    @staticmethod
    async def _handed_over(stream: MarkdownStream, markdown: Markdown, piece: str) -> None:
        """Write `piece` to the stream and wait until the Markdown has rendered it."""
        target = len(markdown.source) + len(piece)
        await stream.write(piece)
        while len(markdown.source) < target and markdown.is_attached:
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
