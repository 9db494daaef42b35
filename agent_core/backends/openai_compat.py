"""Any OpenAI-compatible server: vLLM serving the LoRA, SGLang, llama.cpp, `transformers serve`.

Chat prompts go to a streamed `/v1/chat/completions`, raw text prompts to `/v1/completions`.
Structured `tool_calls` / `reasoning_content` deltas are put back into Qwen3 text
(`openai_deltas`), so the dialect parsers read every backend alike. Stop strings are enforced here
as well as on the server, since not every server honours `stop`; a turn that holds several tool
calls is read to its last one (the dialect parser runs the first and tells the model the others
did not run).

httpx rather than the openai SDK: streaming is a plain byte iterator whose socket can be shut
from another thread (prompt cancel), and nothing retries behind our back, so backoff on 429/503
and every error message stay under our control.

The request is sent and read in a reader thread (`openai_send`, `stream_pump`): this thread
hears every wait (`Waiting`, given to `on_wait`) and every second of silence, and ends a reply
silent for `timeout` seconds (`StreamStalled`). Faults that are not the user's to fix raise
`faults` errors the session retries: a context-length refusal (`ContextTooLong`, with the
server's counts), a reply cut by a full window (`WindowFull`), a broken or damaged stream (a
chunk that is not JSON, an error event, a stall: `StreamDropped` and its kinds), a server busy
past the total deadline (`ServerUnavailable`). The 429/503 wait and the in-flight limit are a
`ServerBackoff` shared by every backend a batch makes for the server. A turn ends at
`finish_reason` (after a bounded wait for usage) whether or not `[DONE]` follows. The served
model, its window and the server's token counter are read once (`served_model`, `server_info`)
before the first request; a session's requests carry its id as `user` for session-affine
routers.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from agent_core.backends.backoff import DEFAULT_DEADLINE, ServerBackoff
from agent_core.backends.base import Backend, BackendError, Prompt, Usage
from agent_core.backends.credentials import API_KEY_ENV_VARS, split_credentials
from agent_core.backends.faults import (
    ContextTooLong,
    ServerUnavailable,
    StreamErrorEvent,
    StreamMalformed,
    StreamStalled,
    WindowFull,
    context_too_long,
)
from agent_core.backends.identity import tokenizer_identity
from agent_core.backends.openai_deltas import ChunkAssembler, malformed_tool_call_text
from agent_core.backends.openai_http import (
    TrackedSockets,
    error_text,
    normalize_base_url,
    parse_json,
    shutdown_socket,
)
from agent_core.backends.openai_send import Cancelled, Wire, send
from agent_core.backends.presets import resolve_preset
from agent_core.backends.reply_budget import ReplyBudget
from agent_core.backends.served_model import ServedModel, complete_tools, resolve_served
from agent_core.backends.server_info import (
    ListingUnavailable,
    ServerTokens,
    llamacpp_window,
    read_listing,
)
from agent_core.backends.sse import SSEEvent
from agent_core.backends.stop_strings import StopScanner
from agent_core.backends.stream_pump import Idle, pump
from agent_core.backends.token_count import AddedTokenCounter
from agent_core.backends.token_estimate import estimate_prompt_tokens, estimate_text_tokens
from agent_core.events import Waiting

log = logging.getLogger(__name__)

MAX_SERVER_STOPS = 4
# After a stop string or `finish_reason` ends the turn, how long to read on for the usage chunk.
USAGE_WAIT = 2.0
# Silence before the first token is said after this long, then every WAIT_EVERY seconds.
SILENCE_SAID = 5.0
WAIT_EVERY = 5.0
CONNECT_TRIES = 3
SOCKET_MARGIN = 5.0
SESSION_HEADER = "X-Session-ID"


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
        self.base_url = normalize_base_url(url)
        self.model = model
        self.timeout = timeout
        self.busy = shared_backoff or ServerBackoff(first=backoff, deadline=busy_deadline)
        self.thinking = thinking
        self.last_usage: Usage | None = None
        self.last_request: tuple[str, dict[str, Any]] | None = None  # (path, body) last sent
        self.on_wait: Callable[[Waiting], None] | None = None
        self.session_key: str | None = None  # sent as `user` (session-affine routers)
        # The flag's key, else the URL's (given for this server), else the environment's.
        self._api_key = api_key or url_key or next(
            (os.environ[v] for v in API_KEY_ENV_VARS if os.environ.get(v)), None
        )
        self._tokenizer_name = tokenizer
        self._added: AddedTokenCounter | None = None
        self._tokenizer: Any = None
        self._cancelled = threading.Event()
        self._served: ServedModel | None = None
        self._served_error: BackendError | None = None
        self._server_tokens: ServerTokens | None = None
        self._sockets = TrackedSockets(self._cancelled)
        headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        transport = httpx.HTTPTransport()
        transport._pool._network_backend = self._sockets  # see TrackedSockets
        # The reading thread's silence bound is `timeout`; the socket's, a little longer.
        self._client = httpx.Client(
            headers=headers, transport=transport,
            timeout=httpx.Timeout(timeout + SOCKET_MARGIN, connect=min(timeout, 10.0)),
        )
        self._wire = Wire(self._client, self.base_url, model, self.busy, self._cancelled,
                          backoff, max_retries, self._scrub, timeout)

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def exact_counts(self) -> bool:
        """True when prompts are counted with the model's tokenizer (`--tokenizer`) or by the
        server itself (`/tokenize`)."""
        if self._tokenizer_name is not None:
            return True
        return self._server_tokens is not None and self._server_tokens.works

    @property
    def context_window(self) -> int | None:
        """The window the server states for the served model (None: it does not say)."""
        served = self._served
        return served.window if served is not None else None

    # -- Backend protocol ------------------------------------------------------------------------

    @property
    def notices(self) -> list[str]:
        """Which served model navtui talks to (reads `/v1/models` once, waiting while the server
        loads; the session shows these when it starts)."""
        served = self._served_model(strict=False)
        return list(served.notices) if served is not None else []

    def attach(self, session_id: str, on_wait: Callable[[Waiting], None]) -> None:
        self.session_key = session_id
        self.on_wait = on_wait

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the turn's text as the server streams it (see module doc)."""
        self._cancelled.clear()
        served = self._served_model(strict=True)
        if served is None:
            raise self._served_error or BackendError("no served model")
        path, body = self._request(prompt, served)
        self.last_request = (path, body)
        headers = {SESSION_HEADER: self.session_key} if self.session_key else {}
        started = time.monotonic()
        first: float | None = None
        produced: list[str] = []
        stops = StopScanner(prompt.stop_after, prompt.stop_before)
        assembler = ChunkAssembler()
        budget = ReplyBudget(prompt.max_new_tokens)
        ended_at: float | None = None  # the turn is over; reading on for the usage chunk
        said = grace = 0.0
        failed = True
        reader = pump(send(self._wire, path, body, headers))
        try:
            for item in reader:
                if self._cancelled.is_set():
                    return
                if isinstance(item, Idle):
                    if ended_at is not None and time.monotonic() - ended_at >= USAGE_WAIT:
                        break
                    if ended_at is None:
                        said = self._silence(item.seconds - grace, said, first is not None)
                    continue
                grace = 0.0
                if isinstance(item, Waiting):
                    grace = item.next_try_s or 0.0  # silence is expected meanwhile
                    self._said(item)
                    continue
                chunk = self._chunk(item)
                if chunk is None:
                    break
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
                if stops.closed or assembler.finish_reason:
                    # The turn is over (unless another tool call opens); the server's usage
                    # chunk comes last: wait for it a bit (a server may also keep the socket
                    # open without `[DONE]`).
                    if assembler.usage is not None:  # it comes last
                        break
                    ended_at = ended_at or time.monotonic()
                else:
                    ended_at = None
            if not stops.done:
                text = stops.feed(assembler.finish()) + stops.flush()
                if text:
                    first = first or time.monotonic()
                    produced.append(text)
                    yield text
            failed = False
        except Cancelled:
            return
        finally:
            self._wire.give_back(not failed)
            reader.close()
            with self._wire.lock:
                response, self._wire.response = self._wire.response, None
            if response is not None:
                shutdown_socket(response)
            self.last_usage = self._usage(
                prompt, assembler.usage, "".join(produced), started, first, time.monotonic()
            )
            if budget.exceeded:
                self.last_usage.new_tokens = max(self.last_usage.new_tokens, prompt.max_new_tokens)
        if assembler.finish_reason == "length" and not stops.done:
            self._check_window(prompt, assembler.usage, "".join(produced))

    def cancel(self) -> None:
        """Stop the turn in progress in any phase: every socket of the request is shut, so a
        blocked connect, wait for the first byte or read returns at once, and the server sees
        the client leave."""
        self._cancelled.set()
        with self._wire.lock:
            response = self._wire.response
        if response is not None:
            shutdown_socket(response)
        self._sockets.shutdown_all()

    def count_tokens(self, prompt: Prompt) -> int:
        """Exact with `tokenizer` (loaded on first use) or the server's `/tokenize`, else
        `token_estimate`'s estimate."""
        tokenizer = self._load_tokenizer()
        if tokenizer is None:
            counted = self._server_tokens.count(prompt) if self._server_tokens else None
            return counted if counted is not None else estimate_prompt_tokens(prompt)
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
        served = self._served_model(strict=True)
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
        if self.session_key:
            body["user"] = self.session_key
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

    def _served_model(self, strict: bool) -> ServedModel | None:
        """The served model to name in requests, from a real `/v1/models` listing (waited for
        while the server loads); None when that reading refused the model (`_served_error` says
        why) or, unless `strict`, when the server is still loading. `strict`: a server loading
        past the deadline raises `ServerUnavailable`."""
        if self._served is not None or self._served_error is not None:
            return self._served
        listing: dict[str, Any] | None = None
        try:
            for item in read_listing(self._client, self.base_url, deadline=self.busy.deadline,
                                     timeout=self.timeout, cancelled=self._cancelled,
                                     connect_tries=CONNECT_TRIES, reached=self._wire.reached,
                                     first=self._wire.backoff):
                if isinstance(item, Waiting):
                    self._said(item)
                else:
                    listing = item
        except ListingUnavailable as why:
            if why.refused and not self._wire.reached:
                return ServedModel(self.model)  # the request then says how to start a server
            if strict:
                raise ServerUnavailable(self._scrub(
                    f"{why}; the session is kept: `navtui --resume ID` continues it"),
                    why="server loading") from None
            return None
        self._wire.reached = True
        if self._cancelled.is_set():
            return ServedModel(self.model)
        try:
            self._served = resolve_served(listing or {}, self.model, resolve_preset(self.model))
        except BackendError as error:
            self._served_error = error
            return None
        root = self.base_url.removesuffix("/v1")
        if self._served.window is None and self._served.family == "llamacpp":
            self._served.window = llamacpp_window(self._client, root, self.timeout)
        self._server_tokens = ServerTokens(self._client, root, self._served.family,
                                           self._served.name, self._template_kwargs, self.timeout)
        return self._served

    # -- response --------------------------------------------------------------------------------

    def _chunk(self, event: SSEEvent) -> dict[str, Any] | None:
        """A stream event's JSON chunk; None at `[DONE]`. An error event raises (see
        `_error_event`); a chunk that is not a JSON object is a fault of the turn, never skipped
        (a lost character would change the action)."""
        data = event.data.strip()
        if data == "[DONE]":
            return None
        chunk = parse_json(data)
        if event.event == "error" or (chunk or {}).get("error") or (
            chunk is None and '"error"' in data
        ):
            return self._error_event(error_text(chunk, data), chunk)
        if chunk is None:
            raise StreamMalformed(self._scrub(
                f"{self.base_url} sent a stream chunk that is not JSON ({data[:120]!r}); "
                "the partial reply is discarded"))
        return chunk

    def _error_event(self, message: str, chunk: dict[str, Any] | None) -> dict[str, Any]:
        """A server's mid-stream error: the model's malformed tool call goes on as turn text (for
        the dialect parser to report); a context-length refusal (SGLang streams its refusal
        this way) raises `ContextTooLong`; anything else (vLLM's engine errors) is a fault of
        the turn, `StreamErrorEvent`."""
        text = malformed_tool_call_text(message)
        too_long = context_too_long(message, chunk) if text is None else None
        if too_long is not None:
            raise ContextTooLong(
                self._scrub(f"{self.base_url} refused the prompt as longer than its context "
                            f"window: {message}"),
                too_long.limit, too_long.prompt_tokens,
            )
        if text is None:
            raise StreamErrorEvent(self._scrub(
                f"{self.base_url} reported an error mid-stream: {message}"
            ))
        log.warning("server could not parse the model's tool call: %.300s", self._scrub(message))
        return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}

    def _silence(self, seconds: float, said: float, streaming: bool) -> float:
        """Say a long silence (every WAIT_EVERY s); past `timeout` it is a stall. Returns when
        it was last said."""
        if seconds >= self.timeout:
            where = "mid-reply" if streaming else "before the first token"
            raise StreamStalled(self._scrub(
                f"{self.base_url} sent nothing for {self.timeout:g} s {where}; the server may be "
                "stuck or overloaded (check its log, or raise --request-timeout)"))
        if seconds >= SILENCE_SAID and seconds - said >= WAIT_EVERY:
            what = "the server stopped sending" if streaming else "no reply from the server yet"
            self._said(Waiting(what, seconds, self.timeout - seconds))
            return seconds
        return said if seconds >= said else 0.0

    def _said(self, waiting: Waiting) -> None:
        if self.on_wait is not None:
            self.on_wait(waiting)
        else:
            log.info("%s", waiting.describe())

    def _check_window(self, prompt: Prompt, usage: dict[str, Any] | None, text: str) -> None:
        """`finish_reason: "length"` before `max_tokens`: the window is full (`WindowFull`)."""
        usage = usage or {}
        reply = usage.get("completion_tokens")
        below = reply < prompt.max_new_tokens if isinstance(reply, int) else (
            estimate_text_tokens(text) < 0.8 * prompt.max_new_tokens)
        if not below:
            return
        prompt_tokens = usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"),
                                                                 int) else None
        window = self.context_window or (
            prompt_tokens + reply if prompt_tokens and isinstance(reply, int) else None)
        raise WindowFull(
            f"{self.base_url} cut the reply at {reply if reply is not None else 'about '}"
            f"{'' if reply is not None else estimate_text_tokens(text)} tokens, below "
            f"max_tokens={prompt.max_new_tokens}: its context window"
            f"{f' ({window} tokens)' if window else ''} is full",
            window, prompt_tokens, reply if isinstance(reply, int) else None)

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

    def _scrub(self, text: str) -> str:
        """Remove the API key from anything shown to the user or logged."""
        return text.replace(self._api_key, "***") if self._api_key else text


