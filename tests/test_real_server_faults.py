"""The stream faults against a real server: `transformers serve` (the scripted tiny Qwen3) behind
a proxy that damages its real stream as a failing server or network would: a chunk cut in half
(not JSON), an error event in place of the rest, a stall, and `max_tokens` clamped as vLLM
clamps it to the room left in the window (the real server then stops with `finish_reason:
"length"` below what navtui asked for). Each is a fault of the turn, never a changed reply."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from agent_core.backends.base import Prompt
from agent_core.backends.faults import StreamErrorEvent, StreamMalformed, StreamStalled, WindowFull
from agent_core.backends.openai_compat import OpenAIBackend
from tests.fixtures.servers import ServedModel
from tests.test_openai_backend_server import scripted_text_prompt
from tests.tiny_model import SCRIPTED_MESSAGES, SCRIPTED_REPLY

pytestmark = pytest.mark.slow


class DamagingProxy:
    """Forwards to `upstream`; `damage` names what it does to the next chat stream."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removesuffix("/v1")
        self.damage = "none"
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                reply = httpx.get(proxy.upstream + self.path, timeout=30)
                self.send_response(reply.status_code)
                self.send_header("Content-Type", reply.headers.get("content-type", ""))
                self.end_headers()
                self.wfile.write(reply.content)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if proxy.damage == "clamp":
                    body["max_tokens"] = 6  # the room a full window leaves
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                with httpx.stream("POST", proxy.upstream + self.path, json=body,
                                  timeout=120) as reply:
                    for number, line in enumerate(reply.iter_lines()):
                        if not self._forward(number, line):
                            return

            def _forward(self, number: int, line: str) -> bool:
                damage = proxy.damage if number >= 4 and line.startswith("data: {") else "none"
                if damage == "cut":
                    line = line[: len(line) // 2]
                elif damage == "error":
                    line = 'data: {"error": {"message": "EngineCore encountered an issue.", ' \
                           '"type": "InternalServerError", "param": null, "code": 500}}'
                elif damage == "stall":
                    time.sleep(30)
                self.wfile.write((line + "\n").encode())
                self.wfile.flush()
                return damage not in ("cut", "error")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def proxy(transformers_server: ServedModel) -> Iterator[DamagingProxy]:
    proxy = DamagingProxy(transformers_server.base_url)
    yield proxy
    proxy.stop()


PROMPT = Prompt(messages=list(SCRIPTED_MESSAGES), stop_after=["</tool_call>"], max_new_tokens=64)


@pytest.mark.parametrize(("damage", "fault"), [
    ("cut", StreamMalformed), ("error", StreamErrorEvent), ("stall", StreamStalled),
    ("clamp", WindowFull),
])
def test_each_damage_to_a_real_stream_is_a_fault_of_the_turn(
    proxy: DamagingProxy, transformers_server: ServedModel, damage: str, fault: type
) -> None:
    backend = OpenAIBackend(proxy.base_url, transformers_server.model, thinking=False,
                            timeout=3)
    # A raw completion for the clamp: a tool call cut short comes back as the server's parse
    # error, which is the model's text (for the dialect parser), not a window.
    prompt = PROMPT if damage != "clamp" else Prompt(
        text=scripted_text_prompt(transformers_server.model), max_new_tokens=64)
    whole = "".join(backend.stream(prompt))
    assert whole == SCRIPTED_REPLY or damage == "clamp", "undamaged, the reply is whole"
    proxy.damage = damage
    with pytest.raises(fault):
        list(backend.stream(prompt))
    backend.close()
