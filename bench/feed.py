"""A model at a controlled pace: an OpenAI-compatible server on 127.0.0.1 for the benches.

`Feed` answers `/v1/chat/completions` (streamed, SSE) with scripted turns: the `quick` ones at
once, then `long` at `rate` tokens per second (4-character tokens released on an absolute
schedule, so a slow reader cannot slow the producer down) once `go` is set; a request after
that waits for `release` and ends the session's turns with nothing. Each paced token's send time
is recorded (`emitted`: monotonic seconds, characters sent so far), in this process, on the
clock the terminal reader uses. navtui reads it as `--backend openai`; the anchors (bench/anchors/)
read the same stream, so every program gets the same text at the same pace over the same path.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNK = 4  # characters per token


class Feed:
    def __init__(self, long: str, rate: float, quick: list[str] | None = None) -> None:
        self.quick = list(quick or [])
        self.long = long
        self.rate = rate
        self.requests = 0
        self.emitted: list[tuple[float, int]] = []
        self.go = threading.Event()
        self.release = threading.Event()
        self.paced_done = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def emitted_at(self, offset: int) -> float:
        """When the token holding character `offset` of the paced turn was sent."""
        low, high = 0, len(self.emitted) - 1
        while low < high:
            middle = (low + high) // 2
            if self.emitted[middle][1] > offset:
                high = middle
            else:
                low = middle + 1
        return self.emitted[low][0]

    def turn(self) -> tuple[str, bool]:
        """The next request's text and whether it is paced."""
        number, self.requests = self.requests, self.requests + 1
        if number < len(self.quick):
            return self.quick[number], False
        if number == len(self.quick):
            return self.long, True
        self.release.wait(600)
        return "", False

    def stop(self) -> None:
        self.go.set()
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _event(content: str | None, finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    chunk: dict[str, Any] = {
        "id": "bench", "object": "chat.completion.chunk", "model": "bench",
        "choices": [] if usage else [{"index": 0, "delta": {"content": content} if content else {},
                                      "finish_reason": finish}],
    }
    if usage:
        chunk["usage"] = usage
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _handler(feed: Feed) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            text, paced = feed.turn()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            try:
                if paced:
                    self._paced(text)
                elif text:
                    self.wfile.write(_event(text))
                self.wfile.write(_event(None, "stop"))
                tokens = max(len(text) // CHUNK, 1)
                self.wfile.write(_event(None, usage={"prompt_tokens": 1000, "completion_tokens": tokens,
                                                     "total_tokens": 1000 + tokens}))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except OSError:
                return
            finally:
                if paced:
                    feed.paced_done.set()

        def _paced(self, text: str) -> None:
            feed.go.wait(600)
            start = time.monotonic()
            for i in range(0, len(text), CHUNK):
                due = start + (i // CHUNK) / feed.rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                self.wfile.write(_event(text[i : i + CHUNK]))
                self.wfile.flush()
                feed.emitted.append((time.monotonic(), min(i + CHUNK, len(text))))

    return Handler
