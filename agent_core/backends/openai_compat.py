"""Any OpenAI-compatible server: vLLM serving the LoRA, SGLang, llama.cpp, `transformers serve`.

Chat prompts go to a streamed `/v1/chat/completions`, raw text prompts to `/v1/completions`.
Structured `tool_calls` / `reasoning_content` deltas are put back into Qwen3 text
(`openai_deltas`), so the dialect parsers read every backend alike. Stop strings are enforced here
as well as on the server, since not every server honours `stop`.

httpx rather than the openai SDK: streaming is a plain line iterator whose socket can be shut from
another thread (prompt cancel), and nothing retries behind our back, so backoff on 429/503 and
every error message stay under our control.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx

from agent_core.backends.base import BackendError, Prompt, Usage
from agent_core.backends.credentials import API_KEY_ENV_VARS, split_credentials
from agent_core.backends.identity import tokenizer_identity
from agent_core.backends.openai_deltas import ChunkAssembler, malformed_tool_call_text
from agent_core.backends.reply_budget import ReplyBudget
from agent_core.backends.sse import iter_sse_events
from agent_core.backends.stop_strings import StopScanner
from agent_core.backends.token_count import AddedTokenCounter
from agent_core.backends.token_estimate import estimate_prompt_tokens, estimate_text_tokens

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 503})
CONNECT_RETRIES = 2
MAX_RETRY_AFTER = 30.0
MAX_SERVER_STOPS = 4
# After a stop string ends the turn, how long to keep reading for the server's usage chunk.
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


class OpenAIBackend:
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
        max_retries: int = 4,
        backoff: float = 0.5,
        thinking: bool | None = None,
    ) -> None:
        """`timeout` bounds the wait for each piece of the stream (prefill of a long prompt
        included); `backoff` is the first retry delay, doubled per retry. `thinking` switches
        Qwen3 thinking on/off through `chat_template_kwargs` (vLLM, SGLang, `transformers serve`);
        None leaves the server's default."""
        url, url_key = split_credentials(base_url)
        self.base_url = _normalize_base_url(url)
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
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
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.Client(
            headers=headers, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0))
        )

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def exact_counts(self) -> bool:
        """True when prompts are counted with the model's tokenizer (`--tokenizer`)."""
        return self._tokenizer_name is not None

    # -- Backend protocol ------------------------------------------------------------------------

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the turn's text as the server streams it (see module doc)."""
        self._cancelled.clear()
        self._draining.clear()
        path, body = self._request(prompt)
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
                if stops.done:
                    # The turn is over; the server's usage chunk comes last: wait for it a bit.
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
        """Stop the turn in progress: the socket is shut so a blocked read returns at once."""
        self._cancelled.set()
        with self._lock:
            response = self._response
        if response is not None:
            _shutdown_socket(response)

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

    def _request(self, prompt: Prompt) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model,
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
        if self._template_kwargs():
            body["chat_template_kwargs"] = self._template_kwargs()
        return "/chat/completions", body

    def _template_kwargs(self) -> dict[str, Any]:
        return {} if self.thinking is None else {"enable_thinking": self.thinking}

    def _open(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """Send the request, retrying 429/503 and refused connections with exponential backoff."""
        url = self.base_url + path
        attempt = 0
        while True:
            if self._cancelled.is_set():
                raise _Cancelled
            try:
                response = self._client.send(
                    self._client.build_request("POST", url, json=body), stream=True
                )
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt >= min(CONNECT_RETRIES, self.max_retries):
                    raise BackendError(self._scrub(
                        f"cannot connect to {self.base_url} ({_reason(exc)}). Is the server "
                        f"running? {server_hint(self.model)}"
                    )) from None
                self._sleep(self.backoff * 2**attempt)
                attempt += 1
                continue
            except httpx.TimeoutException:
                raise BackendError(self._timeout_message()) from None
            with self._lock:
                self._response = response
            if response.status_code < 400:
                return response
            message = _server_message(response)
            response.close()
            if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                delay = _retry_after(response)
                self._sleep(self.backoff * 2**attempt if delay is None else delay)
                attempt += 1
                continue
            raise BackendError(self._scrub(self._http_error(response.status_code, message, attempt)))

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
                    yield self._error_event(_error_text(chunk, data))
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
                raise BackendError(self._scrub(
                    f"connection to {self.base_url} broke mid-stream ({_reason(exc)}); "
                    "check the server's log (crashed or restarted?) and try again"
                )) from None

    def _error_event(self, message: str) -> dict[str, Any]:
        """A server's mid-stream error: the model's malformed tool call goes on as turn text (for
        the dialect parser to report); anything else raises."""
        text = malformed_tool_call_text(message)
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

    def _http_error(self, status: int, message: str, retries: int) -> str:
        url = self.base_url
        if status in (401, 403):
            return (f"{url} refused the API key (HTTP {status}: {message}); set --api-key or "
                    f"{' / '.join(API_KEY_ENV_VARS)}")
        if status == 404:
            return (f"{url} answered HTTP 404 ({message}); check --base-url (usually ends in /v1) "
                    f"and --model {self.model!r} (the server lists its models at {url}/models)")
        if status in RETRY_STATUSES:
            return (f"{url} is still busy after {retries} retries (HTTP {status}: {message}); "
                    "try again later or lower the load on the server")
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
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


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


def _server_message(response: httpx.Response) -> str:
    """The error message an HTTP error response carries (OpenAI, FastAPI or plain text)."""
    try:
        raw = response.read().decode("utf-8", "replace")
    except httpx.HTTPError:
        return response.reason_phrase
    body = _parse_json(raw)
    if body:
        for key in ("error", "detail", "message"):
            if body.get(key):
                value = body[key]
                if isinstance(value, dict):
                    value = value.get("message") or value
                return str(value)[:500]
    return raw.strip()[:500] or response.reason_phrase


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None


def _reason(exc: Exception) -> str:
    text = str(exc)
    if "refused" in text.lower():
        return "connection refused"
    return text or type(exc).__name__
