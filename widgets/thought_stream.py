"""The model's text, streamed token by token into Markdown that follows the end of the stream."""

from __future__ import annotations

from markdown_it import MarkdownIt
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from widgets._css import css_beside


def _plain_markdown() -> MarkdownIt:
    """GFM-like Markdown with raw HTML shown as text, so `<tool_call>` and `<think>` stay visible."""
    return MarkdownIt("gfm-like", options_update={"html": False})


class ThoughtStream(VerticalScroll):
    """One Markdown block per model turn; older turns are dropped past `max_turns`.

    The container is anchored once its content first overflows (anchoring earlier would pin
    short content to the bottom), so it follows new text until the user scrolls up.
    """

    DEFAULT_CSS = css_beside(__file__)

    def __init__(self, *, max_turns: int = 30, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_turns = max_turns
        self._markdown: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self.text = ""

    def follow_if_full(self) -> None:
        """Anchor (once) as soon as the laid-out content overflows the view."""
        if not self.is_anchored and self.max_scroll_y > 0:
            self.anchor()

    async def begin_turn(self, title: str) -> None:
        """Start a new block for a model turn titled `title`."""
        await self.end_turn()
        self.text = ""
        self._markdown = Markdown(classes="turn", parser_factory=_plain_markdown)
        self.follow_if_full()
        await self.mount_all([Static(title, classes="turn-title"), self._markdown])
        self._stream = Markdown.get_stream(self._markdown)
        await self._trim()

    async def write(self, fragment: str) -> None:
        """Append streamed model text to the current turn."""
        if self._stream is None:
            await self.begin_turn("Model")
        assert self._stream is not None
        self.text += fragment
        self.follow_if_full()
        await self._stream.write(fragment)

    async def end_turn(self, thought: str | None = None) -> None:
        """Finish the current turn; when `thought` is given it replaces the raw streamed text."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if thought is not None and self._markdown is not None:
            self.text = thought
            await self._markdown.update(thought.strip() or "*(no thought, only an action)*")
            self.call_after_refresh(self.follow_if_full)
    
    async def note(self, text: str, variant: str = "info") -> None:
        """A line that is not model text: a rejection, a user message, a format error."""
        await self.end_turn()
        self.follow_if_full()
        await self.mount(Static(text, classes=f"note -{variant}", markup=False))
        await self._trim()

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
