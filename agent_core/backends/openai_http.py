"""The HTTP side of the openai backend: sockets that `cancel()` can shut from another thread,
the URL's shape, and what an error reply says (OpenAI, FastAPI or plain text bodies)."""

from __future__ import annotations

import json
import re
import shlex
import socket
import threading
import weakref
from collections.abc import Callable
from typing import Any

import httpcore
import httpx

from agent_core.backends.base import BackendError
from agent_core.backends.faults import ServerFault
from agent_core.backends.stream_lines import read_capped

VLLM_HINT = (
    "start one, e.g. `vllm serve Qwen/Qwen3-8B --enable-lora "
    "--lora-modules navigator-8b=ShubhamRasal/qwen3-8b-code-navigator --max-lora-rank 64 "
    "--enable-auto-tool-choice --tool-call-parser hermes --port 8000`, then use "
    "--base-url http://localhost:8000/v1 --model navigator-8b"
)

ERROR_BODY_CAP = 64 * 1024  # bytes of an error reply read for its message


def server_hint(model: str) -> str:
    """How to get a server for `model`: the navigator preset's vLLM line, else a generic one."""
    if model == "navigator-8b":
        return VLLM_HINT
    return (f"start one that serves the model `{model}` (e.g. `vllm serve {shlex.quote(model)} --port 8000`), "
            "then pass its URL with --base-url")


def shutdown_socket(response: httpx.Response) -> None:
    """Shut the response's socket: a read blocked in another thread returns at once, and the
    server sees the client leave (and stops generating)."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        _shutdown(sock)


def normalize_base_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if not re.match(r"^https?://", url):
        raise BackendError(f"--base-url must start with http:// or https://, got {url!r}")
    return url if url.endswith("/v1") else url + "/v1"


def parse_json(data: str) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def error_text(chunk: dict[str, Any] | None, raw: str) -> str:
    """The server's own words for an error event, from JSON or from a malformed payload."""
    error = chunk.get("error") if chunk else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    if error:
        return str(error)
    match = re.search(r'"error"\s*:\s*"(.*)"\s*}\s*$', raw, re.DOTALL)
    return match.group(1) if match else raw[:500]


def server_message(response: httpx.Response) -> tuple[str, dict[str, Any] | None]:
    """The error message an HTTP error response carries (OpenAI, FastAPI or plain text), and
    the parsed body when it is JSON."""
    try:
        raw = read_capped(response, ERROR_BODY_CAP).decode("utf-8", "replace")
    except (httpx.HTTPError, ServerFault):
        return response.reason_phrase, None
    body = parse_json(raw)
    if body:
        for key in ("error", "detail", "message"):
            if body.get(key):
                value = body[key]
                if isinstance(value, dict):
                    value = value.get("message") or value
                return str(value)[:500], body
    return raw.strip()[:500] or response.reason_phrase, body


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def reason(exc: Exception) -> str:
    text = str(exc)
    if "refused" in text.lower():
        return "connection refused"
    return text or type(exc).__name__


class TrackedSockets(httpcore.NetworkBackend):
    """httpcore's sync network backend, remembering the sockets it opens so `cancel()` can shut
    a request that has no response yet (waiting for the first byte). A connect runs in a helper
    thread so a cancel while it hangs (a host that drops SYNs, a full accept queue) returns at
    once; the connection, if it comes later, is closed."""

    def __init__(self, cancelled: threading.Event) -> None:
        self._inner = httpcore.SyncBackend()
        self._cancelled = cancelled
        self._open: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return self._connect(lambda: self._inner.connect_tcp(host, port, timeout, local_address,
                                                             socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return self._connect(lambda: self._inner.connect_unix_socket(path, timeout,
                                                                     socket_options))

    def _connect(self, connect: Callable[[], httpcore.NetworkStream]) -> httpcore.NetworkStream:
        outcome: list[httpcore.NetworkStream | Exception] = []
        finished = threading.Event()
        lock = threading.Lock()
        abandoned = False

        def run() -> None:
            try:
                result: httpcore.NetworkStream | Exception = connect()
            except Exception as exc:
                result = exc
            with lock:
                if abandoned:
                    if not isinstance(result, Exception):
                        result.close()
                    return
                outcome.append(result)
            finished.set()

        threading.Thread(target=run, name="navtui-connect", daemon=True).start()
        while not finished.wait(0.05):
            if self._cancelled.is_set():
                with lock:
                    if not outcome:
                        abandoned = True
                        raise httpcore.ConnectError("cancelled while connecting")
                break
        result = outcome[0]
        if isinstance(result, Exception):
            raise result
        return self._track(result)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)

    def shutdown_all(self) -> None:
        with self._lock:
            sockets = list(self._open)
        for sock in sockets:
            _shutdown(sock)

    def _track(self, stream: httpcore.NetworkStream) -> httpcore.NetworkStream:
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._open.add(sock)
            if self._cancelled.is_set():
                _shutdown(sock)
        return stream


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
