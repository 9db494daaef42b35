"""Anchor: the streamed text written into a Textual `Markdown` through its `MarkdownStream`
(Textual's own way to stream Markdown), in an anchored scroll view under a `keys: N` line that
counts the `d` key.

    python bench/anchors/textual_markdown.py BASE_URL

A thread worker reads the stream and posts each fragment as a message; the app writes it to the
MarkdownStream. `q` quits.
"""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Markdown, Static

from feed_client import fragments


class Fragment(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class MarkdownAnchor(App):
    BINDINGS = [("d", "count", "count"), ("q", "quit", "quit")]

    def __init__(self, base_url: str) -> None:
        super().__init__()
        self.base_url = base_url
        self.keys = 0
        self.stream = None

    def compose(self) -> ComposeResult:
        yield Static("keys: 0", id="keys")
        with VerticalScroll():
            yield Markdown()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()
        self.stream = Markdown.get_stream(self.query_one(Markdown))
        self.run_worker(self.read, thread=True)

    def read(self) -> None:
        for text in fragments(self.base_url):
            self.post_message(Fragment(text))

    async def on_fragment(self, message: Fragment) -> None:
        await self.stream.write(message.text)

    def action_count(self) -> None:
        self.keys += 1
        self.query_one("#keys", Static).update(f"keys: {self.keys}")


if __name__ == "__main__":
    MarkdownAnchor(sys.argv[1]).run()
