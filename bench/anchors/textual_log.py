"""Anchor: the streamed text written into a Textual `Log`, under a `keys: N` line that counts
the `d` key (an App binding).

    python bench/anchors/textual_log.py BASE_URL

A thread worker reads the stream and posts each fragment as a message; the app writes it to the
log. `q` quits.
"""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Log, Static

from feed_client import fragments


class Fragment(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class LogAnchor(App):
    BINDINGS = [("d", "count", "count"), ("q", "quit", "quit")]

    def __init__(self, base_url: str) -> None:
        super().__init__()
        self.base_url = base_url
        self.keys = 0

    def compose(self) -> ComposeResult:
        yield Static("keys: 0", id="keys")
        yield Log()

    def on_mount(self) -> None:
        self.run_worker(self.read, thread=True)

    def read(self) -> None:
        for text in fragments(self.base_url):
            self.post_message(Fragment(text))

    def on_fragment(self, message: Fragment) -> None:
        self.query_one(Log).write(message.text)

    def action_count(self) -> None:
        self.keys += 1
        self.query_one("#keys", Static).update(f"keys: {self.keys}")


if __name__ == "__main__":
    LogAnchor(sys.argv[1]).run()
