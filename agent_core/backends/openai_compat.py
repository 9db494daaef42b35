"""Any OpenAI-compatible server: vLLM serving the LoRA, SGLang, llama.cpp, `transformers serve`.

Chat prompts go to a streamed `/v1/chat/completions`, raw text prompts to `/v1/completions`.
Structured `tool_calls` / `reasoning_content` deltas are put back into Qwen3 text
(`openai_deltas`), so the dialect parsers read every backend alike. Stop strings are enforced here
as well as on the server, since not every server honours `stop`.

httpx rather than the openai SDK: streaming is a plain line iterator whose socket can be shut from
another thread (prompt cancel), and nothing retries behind our back, so backoff on 429/503 and
every error message stay under our control.

Faults that are not the user's to fix raise `faults` errors the session retries: a context-length
refusal (`ContextTooLong`, with the server's counts), a connection that broke once the request was
sent (`StreamDropped`), a server busy past the total deadline (`ServerUnavailable`). The wait for
429/503 is a `ServerBackoff`, shared by every backend a batch makes for the server. A turn ends at
`finish_reason` (after a bounded wait for usage) whether or not `[DONE]` follows. `cancel()` shuts
every socket the request uses, so it also stops the wait for the first byte. The served model is
read from `/v1/models` once (`served_model`) before the first request.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import httpcore
import httpx

from agent_core.backends.backoff import DEFAULT_DEADLINE, ServerBackoff
from agent_core.backends.base import Backend, BackendError, Prompt, Usage
from agent_core.backends.credentials import API_KEY_ENV_VARS, split_credentials
from agent_core.backends.faults import (
    ContextTooLong,
    ServerUnavailable,
    StreamDropped,
    context_too_long,
)
from agent_core.backends.identity import tokenizer_identity
from agent_core.backends.openai_deltas import ChunkAssembler, malformed_tool_call_text
from agent_core.backends.presets import resolve_preset
from agent_core.backends.reply_budget import ReplyBudget
from agent_core.backends.served_model import ServedModel, complete_tools, resolve_served
from agent_core.backends.sse import iter_sse_events
from agent_core.backends.stop_strings import StopScanner
from agent_core.backends.token_count import AddedTokenCounter
from agent_core.backends.token_estimate import estimate_prompt_tokens, estimate_text_tokens

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 503})
CONTEXT_STATUSES = frozenset({400, 413, 422})
CONNECT_RETRIES = 2
MAX_SERVER_STOPS = 4
# After a stop string or `finish_reason` ends the turn, how long to read on for the usage chunk.
USAGE_WAIT = 2.0
VLLM_HINT = (
    "start one, e.g. `vllm serve Qwen/Qwen3-8B --enable-lora "
    "--lora-modules navigator-8b=ShubhamRasal/qwen3-8b-code-navigator --max-lora-rank 64 "
    "--enable-auto-tool-choice --tool-call-parser hermes --port 8000`, then use "
    "--base-url http://localhost:8000/v1 --model navigator-8b"
)


def server_hint(model: str) -> str:
    """How to get a server for `model`: the navigator preset's vLLM line, else a generic one."""
    if model == "navigator-8b":
        return VLLM_HINT
    return (f"start one that serves the model `{model}` (e.g. `vllm serve {model} --port 8000`), "
            "then pass its URL with --base-url")


class _Cancelled(Exception):
    """cancel() was called while waiting to (re)send the request."""


class OpenAIBackend(Backend):
    """Streams turns from an OpenAI-compatible HTTP server."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        tokenizer: str | None = None,
        timeout: float = 300.0,
        max_retries: int | None = None,
        backoff: float = 0.5,
        busy_deadline: float = DEFAULT_DEADLINE,
        shared_backoff: ServerBackoff | None = None,
        thinking: bool | None = None,
    ) -> None:
        """`timeout` bounds the wait for each piece of the stream (prefill of a long prompt
        included); `backoff` is the first retry delay, doubled per retry, and `busy_deadline`
        the total time a request keeps retrying 429/503 (`max_retries` caps the retries too;
        None: only the deadline). `shared_backoff` replaces both with one every backend of a
        batch shares. `thinking` switches Qwen3 thinking on/off through `chat_template_kwargs`
        (vLLM, SGLang, `transformers serve`); None leaves the server's default."""
        url, url_key = split_credentials(base_url)
        self.base_url = _normalize_base_url(url)
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.busy = shared_backoff or ServerBackoff(first=backoff, deadline=busy_deadline)
        self.thinking = thinking
        self.last_usage: Usage | None = None
        self.last_request: tuple[str, dict[str, Any]] | None = None  # (path, body) last sent
        # The flag's key, else the URL's (given for this server), else the environment's.
        self._api_key = api_key or url_key or next(
            (os.environ[v] for v in API_KEY_ENV_VARS if os.environ.get(v)), None
        )
        self._tokenizer_name = tokenizer
        self._added: AddedTokenCounter | None = None
        self._tokenizer: Any = None
        self._cancelled = threading.Event()
        self._draining = threading.Event()  # reading on after the turn, for the usage chunk
        self._response: httpx.Response | None = None
        self._lock = threading.Lock()
        self._served: ServedModel | None = None
        self._reached = False  # the server answered once: a refused connection is a restart
        self._served_error: BackendError | None = None
        self._sockets = _TrackedSockets(self._cancelled)
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        transport = httpx.HTTPTransport()
        transport._pool._network_backend = self._sockets  # see _TrackedSockets
        self._client = httpx.Client(
            headers=headers, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def exact_counts(self) -> bool:
        """True when prompts are counted with the model's tokenizer (`--tokenizer`)."""
        return self._tokenizer_name is not None

    # -- Backend protocol ------------------------------------------------------------------------

    @property
    def notices(self) -> list[str]:
        """Which served model navtui talks to (reads `/v1/models` once; the session shows
        these when it starts)."""
        served = self._served_model()
        return list(served.notices) if served is not None else []

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the turn's text as the server streams it (see module doc)."""
        self._cancelled.clear()
        self._draining.clear()
        served = self._served_model()
        if served is None:
            raise self._served_error or BackendError("no served model")
        path, body = self._request(prompt, served)
        self.last_request = (path, body)
        started = time.monotonic()
        first: float | None = None
        produced: list[str] = []
        stops = StopScanner(prompt.stop_after, prompt.stop_before)
        assembler = ChunkAssembler()
        budget = ReplyBudget(prompt.max_new_tokens)
        drain: threading.Timer | None = None
        try:
            response = self._open(path, body)
        except _Cancelled:
            return
        try:
            for chunk in self._chunks(response):
                piece = assembler.feed(chunk)
                if budget.feed(piece):
                    log.warning(
                        "%s sent more than max_tokens=%d tokens; stopped reading the reply",
                        self.base_url, prompt.max_new_tokens,
                    )
                    break
                if not stops.done:
                    text = stops.feed(piece)
                    if text:
                        first = first or time.monotonic()
                        produced.append(text)
                        yield text
                if stops.done or assembler.finish_reason:
                    # The turn is over; the server's usage chunk comes last: wait for it a bit
                    # (a server may also keep the socket open without `[DONE]`).
                    if assembler.usage is not None:
                        break
                    drain = drain or self._drain(response)
            if not stops.done:
                text = stops.feed(assembler.finish()) + stops.flush()
                if text:
                    first = first or time.monotonic()
                    produced.append(text)
                    yield text
        finally:
            if drain is not None:
                drain.cancel()
            with self._lock:
                self._response = None
            response.close()
            self.last_usage = self._usage(
                prompt, assembler.usage, "".join(produced), started, first, time.monotonic()
            )
            if budget.exceeded:
                self.last_usage.new_tokens = max(self.last_usage.new_tokens, prompt.max_new_tokens)

    def cancel(self) -> None:
        """Stop the turn in progress in any phase: every socket of the request is shut, so a
        blocked connect, wait for the first byte or read returns at once, and the server sees
        the client leave."""
        self._cancelled.set()
        with self._lock:
            response = self._response
        if response is not None:
            _shutdown_socket(response)
        self._sockets.shutdown_all()

    def count_tokens(self, prompt: Prompt) -> int:
        """Exact with `tokenizer` (loaded on first use), else `token_estimate`'s estimate."""
        tokenizer = self._load_tokenizer()
        if tokenizer is None:
            return estimate_prompt_tokens(prompt)
        if prompt.text is not None:
            return len(tokenizer.encode(prompt.text, add_special_tokens=False))
        ids = tokenizer.apply_chat_template(
            prompt.messages or [], tools=prompt.tools, add_generation_prompt=True, tokenize=True,
            **self._template_kwargs(),
        )
        if hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return len(ids)

    def count_added_tokens(self, before: Prompt, after: Prompt) -> int:
        """Tokens `after` adds to `before`: only the added text is encoded when it can be."""
        tokenizer = self._load_tokenizer()
        added = None
        if tokenizer is not None:
            if self._added is None or self._added.tokenizer is not tokenizer:
                self._added = AddedTokenCounter(tokenizer, self._template_kwargs())
            added = self._added.count(before, after)
        return added if added is not None else self.count_tokens(after) - self.count_tokens(before)

    def close(self) -> None:
        self.cancel()
        self._client.close()

    def identity(self) -> dict[str, Any]:
        """The server and model asked for; the tokenizer and its template when `--tokenizer`
        names one (the server's own template is not visible from here)."""
        tokenizer = self._load_tokenizer()
        return {
            "backend": self.name,
            "base_url": self.base_url,
            "model": {"ref": self.model},
            "tokenizer": tokenizer_identity(tokenizer) if tokenizer is not None else None,
            "generation": {"thinking": self.thinking},
        }

    # -- request ---------------------------------------------------------------------------------

    def request_for(self, prompt: Prompt) -> tuple[str, dict[str, Any]]:
        """The (path, body) `stream` would send for `prompt`, with the served model's name."""
        served = self._served_model()
        if served is None:
            raise self._served_error or BackendError("no served model")
        return self._request(prompt, served)

    def _request(self, prompt: Prompt, served: ServedModel) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": served.name,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": prompt.max_new_tokens,
        }
        if prompt.stop_before:
            body["stop"] = prompt.stop_before[:MAX_SERVER_STOPS]
        if prompt.text is not None:
            return "/completions", body | {"prompt": prompt.text}
        if not prompt.messages:
            raise BackendError("empty prompt: give Prompt.messages (chat) or Prompt.text")
        body["messages"] = prompt.messages
        if prompt.tools:
            body["tools"] = prompt.tools
            if served.family == "sglang":
                from agent_core.formats.toolcall import TOOL_KINDS

                body["tools"] = complete_tools(prompt.tools, TOOL_KINDS)
        if self._template_kwargs():
            body["chat_template_kwargs"] = self._template_kwargs()
        return "/chat/completions", body

    def _template_kwargs(self) -> dict[str, Any]:
        return {} if self.thinking is None else {"enable_thinking": self.thinking}

    def _served_model(self) -> ServedModel | None:
        """The served model to name in requests, from `/v1/models` (read once it answers);
        None when that reading refused the model (`_served_error` says why)."""
        if self._served is None and self._served_error is None:
            try:
                response = self._client.get(self.base_url + "/models",
                                            timeout=min(self.timeout, 10.0))
                listing = _parse_json(response.text) if response.status_code == 200 else None
            except httpx.HTTPError:  # not up yet: ask again before the next request
                return ServedModel(self.model)
            try:
                self._served = resolve_served(listing or {}, self.model,
                                              resolve_preset(self.model))
            except BackendError as error:
                self._served_error = error
        return self._served

    def _open(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """Send the request. 429/503 wait out the shared backoff until the total deadline (then
        `ServerUnavailable`); so do refused connections once the server has answered before
        (it is restarting), while a server never reached is retried a few times only."""
        url = self.base_url + path
        refused = busy_retries = 0
        busy_since: float | None = None
        while True:
            give_up_at = None if busy_since is None else busy_since + self.busy.deadline
            if not self.busy.wait(self._cancelled, give_up_at):
                raise _Cancelled
            try:
                response = self._client.send(
                    self._client.build_request("POST", url, json=body), stream=True
                )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if self._cancelled.is_set():
                    raise _Cancelled from None
                if self._reached:
                    now = time.monotonic()
                    busy_since = busy_since if busy_since is not None else now
                    if now - busy_since < self.busy.deadline:
                        self.busy.busy(None)
                        busy_retries += 1
                        continue
                    raise ServerUnavailable(self._scrub(
                        f"{self.base_url} stopped accepting connections ({_reason(exc)}) and "
                        f"did not come back within {now - busy_since:.0f} s; the session is "
                        "kept: `navtui --resume ID` continues it"
                    ), reason="server unreachable") from None
                if refused >= CONNECT_RETRIES:
                    raise BackendError(self._scrub(
                        f"cannot connect to {self.base_url} ({_reason(exc)}). Is the server "
                        f"running? {server_hint(self.model)}"
                    )) from None
                self._sleep(self.backoff * 2**refused)
                refused += 1
                continue
            except httpx.TimeoutException:
                if self._cancelled.is_set():
                    raise _Cancelled from None
                raise BackendError(self._timeout_message()) from None
            except httpx.TransportError as exc:
                if self._cancelled.is_set():
                    raise _Cancelled from None
                raise StreamDropped(self._scrub(
                    f"connection to {self.base_url} broke before the reply began ({_reason(exc)})"
                )) from None
            with self._lock:
                self._response = response
            self._reached = True
            if self._cancelled.is_set():
                response.close()
                raise _Cancelled
            if response.status_code < 400:
                self.busy.succeeded()
                return response
            message, parsed = _server_message(response)
            response.close()
            status = response.status_code
            if status in RETRY_STATUSES:
                now = time.monotonic()
                busy_since = busy_since if busy_since is not None else now
                if (self.max_retries is None or busy_retries < self.max_retries) and (
                    now - busy_since < self.busy.deadline
                ):
                    self.busy.busy(_retry_after(response))
                    busy_retries += 1
                    continue
                waited = now - busy_since
                raise ServerUnavailable(
                    self._scrub(self._busy_message(status, message, busy_retries, waited)),
                    reason=f"server busy (HTTP {status})",
                )
            too_long = context_too_long(message, parsed) if status in CONTEXT_STATUSES else None
            if too_long is not None:
                raise ContextTooLong(
                    self._scrub(f"{self.base_url} refused the prompt as longer than its context "
                                f"window (HTTP {status}: {message})"),
                    too_long.limit, too_long.prompt_tokens,
                )
            raise BackendError(self._scrub(self._http_error(status, message)))

    def _drain(self, response: httpx.Response) -> threading.Timer:
        """Read on for at most USAGE_WAIT seconds, then shut the socket (the read then ends)."""
        self._draining.set()
        timer = threading.Timer(USAGE_WAIT, _shutdown_socket, args=(response,))
        timer.daemon = True
        timer.start()
        return timer

    def _sleep(self, seconds: float) -> None:
        if self._cancelled.wait(seconds):
            raise _Cancelled

    # -- response --------------------------------------------------------------------------------

    def _chunks(self, response: httpx.Response) -> Iterator[dict[str, Any]]:
        """Parsed JSON chunks of the stream; server-reported errors raise BackendError."""
        try:
            for event in iter_sse_events(response.iter_lines()):
                if self._cancelled.is_set():
                    return
                data = event.data.strip()
                if data == "[DONE]":
                    return
                chunk = _parse_json(data)
                if event.event == "error" or (chunk or {}).get("error") or (
                    chunk is None and '"error"' in data
                ):
                    yield self._error_event(_error_text(chunk, data), chunk)
                    return
                if chunk is None:
                    log.warning("skipping a stream event that is not JSON: %.200s",
                                self._scrub(data))
                    continue
                yield chunk
        except httpx.TimeoutException:
            if not (self._cancelled.is_set() or self._draining.is_set()):
                raise BackendError(self._timeout_message()) from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            if not (self._cancelled.is_set() or self._draining.is_set()):
                raise StreamDropped(self._scrub(
                    f"connection to {self.base_url} broke mid-stream ({_reason(exc)}); "
                    "check the server's log (crashed or restarted?)"
                )) from None

    def _error_event(self, message: str, chunk: dict[str, Any] | None) -> dict[str, Any]:
        """A server's mid-stream error: the model's malformed tool call goes on as turn text (for
        the dialect parser to report); a context-length refusal (SGLang streams its refusal
        this way) raises `ContextTooLong`; anything else raises."""
        text = malformed_tool_call_text(message)
        too_long = context_too_long(message, chunk) if text is None else None
        if too_long is not None:
            raise ContextTooLong(
                self._scrub(f"{self.base_url} refused the prompt as longer than its context "
                            f"window: {message}"),
                too_long.limit, too_long.prompt_tokens,
            )
        if text is None:
            raise BackendError(self._scrub(
                f"{self.base_url} reported an error mid-stream: {message}"
            ))
        log.warning("server could not parse the model's tool call: %.300s", self._scrub(message))
        return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}

    def _usage(
        self,
        prompt: Prompt,
        server: dict[str, Any] | None,
        text: str,
        started: float,
        first: float | None,
        ended: float,
    ) -> Usage:
        server = server or {}
        reported = bool(server.get("completion_tokens") and server.get("prompt_tokens"))
        new_tokens = server.get("completion_tokens") or self._count_text(text)
        prompt_tokens = server.get("prompt_tokens") or self.count_tokens(prompt)
        cached = (server.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        ttft = (first - started) if first is not None else 0.0
        decode = ended - first if first is not None else 0.0
        rate = (new_tokens - 1) / decode if new_tokens > 1 and decode > 0 else 0.0
        return Usage(
            prompt_tokens=prompt_tokens,
            new_tokens=new_tokens,
            cached_tokens=cached,
            time_to_first_token=ttft,
            tokens_per_second=rate,
            estimated=not (reported or self.exact_counts),
        )

    # -- helpers ---------------------------------------------------------------------------------

    def _count_text(self, text: str) -> int:
        tokenizer = self._load_tokenizer()
        if tokenizer is None:
            return estimate_text_tokens(text)
        return len(tokenizer.encode(text, add_special_tokens=False))

    def _load_tokenizer(self) -> Any:
        if self._tokenizer is None and self._tokenizer_name:
            try:
                from transformers import AutoTokenizer
            except ImportError:  # the light install: count with the estimate instead
                self._tokenizer_name = None
                return None
            try:
                self._tokenizer = AutoTokenizer.from_pretrained(self._tokenizer_name)
            except OSError as exc:
                raise BackendError(
                    f"cannot load tokenizer {self._tokenizer_name!r} ({exc}); pass a local "
                    "model directory or a Hub id available offline, or omit --tokenizer to "
                    "use an estimate"
                ) from None
        return self._tokenizer

    def _busy_message(self, status: int, message: str, retries: int, waited: float) -> str:
        return (f"{self.base_url} is still busy after {retries} retries (HTTP {status}: "
                f"{message}) over {waited:.0f} s; try again later or lower the load on the "
                "server (the session is kept: `navtui --resume ID` continues it)")

    def _http_error(self, status: int, message: str) -> str:
        url = self.base_url
        if status in (401, 403):
            return (f"{url} refused the API key (HTTP {status}: {message}); set --api-key or "
                    f"{' / '.join(API_KEY_ENV_VARS)}")
        if status == 404:
            return (f"{url} answered HTTP 404 ({message}); check --base-url (usually ends in /v1) "
                    f"and --model {self.model!r} (the server lists its models at {url}/models)")
        if status >= 500:
            return f"{url} failed with HTTP {status}: {message}; check the server's log"
        return f"{url} rejected the request with HTTP {status}: {message}"

    def _timeout_message(self) -> str:
        return (f"{self.base_url} sent nothing for {self.timeout:g} s; the server may be stuck or "
                "overloaded: check its log, or raise --request-timeout")

    def _scrub(self, text: str) -> str:
        """Remove the API key from anything shown to the user or logged."""
        return text.replace(self._api_key, "***") if self._api_key else text


def _shutdown_socket(response: httpx.Response) -> None:
    """Shut the response's socket: a read blocked in another thread returns at once, and the
    server sees the client leave (and stops generating)."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        _shutdown(sock)


def _normalize_base_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if not re.match(r"^https?://", url):
        raise BackendError(f"--base-url must start with http:// or https://, got {url!r}")
    return url if url.endswith("/v1") else url + "/v1"


def _parse_json(data: str) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error_text(chunk: dict[str, Any] | None, raw: str) -> str:
    """The server's own words for an error event, from JSON or from a malformed payload."""
    error = chunk.get("error") if chunk else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    if error:
        return str(error)
    match = re.search(r'"error"\s*:\s*"(.*)"\s*}\s*$', raw, re.DOTALL)
    return match.group(1) if match else raw[:500]


def _server_message(response: httpx.Response) -> tuple[str, dict[str, Any] | None]:
    """The error message an HTTP error response carries (OpenAI, FastAPI or plain text), and
    the parsed body when it is JSON."""
    try:
        raw = response.read().decode("utf-8", "replace")
    except httpx.HTTPError:
        return response.reason_phrase, None
    body = _parse_json(raw)
    if body:
        for key in ("error", "detail", "message"):
            if body.get(key):
                value = body[key]
                if isinstance(value, dict):
                    value = value.get("message") or value
                return str(value)[:500], body
    return raw.strip()[:500] or response.reason_phrase, body


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def _reason(exc: Exception) -> str:
    text = str(exc)
    if "refused" in text.lower():
        return "connection refused"
    return text or type(exc).__name__


class _TrackedSockets(httpcore.NetworkBackend):
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
