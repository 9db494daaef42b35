"""What a server says about itself: its model listing (waited for while it loads), its context
window, and its own token counts.

* `/v1/models` answering 503, or refusing connections, means a server still loading or a router
  warming up: `read_listing` asks again with a doubling pause (each wait a `Waiting`) up to the
  deadline; the adapter name is chosen only from a real listing (`served_model`).
* The window: vLLM and SGLang list `max_model_len` with each model; llama.cpp gives its slots'
  `n_ctx` at `/props` (`default_generation_settings.n_ctx`) and some builds in the listing's
  `meta.n_ctx` (`meta.n_ctx_train` is the model's training length, not the server's window).
* Token counts: vLLM's `POST /tokenize` takes the chat messages and tools and answers `count`;
  llama.cpp's renders them with `POST /apply-template` (`prompt`) and counts with
  `POST /tokenize` (`tokens`). Elsewhere, or when these fail, the estimate stays.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from agent_core.backends.openai_http import parse_json
from agent_core.events import Waiting
from agent_core.prompt_types import Prompt

LISTING_WAIT_CAP = 8.0
COUNT_CACHE = 64


class ListingUnavailable(Exception):
    """`/v1/models` kept answering 503 (or refusing connections) until the deadline."""

    def __init__(self, message: str, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


def read_listing(client: httpx.Client, base_url: str, *, deadline: float, timeout: float,
                 cancelled: threading.Event, connect_tries: int, reached: bool,
                 first: float = 0.5) -> Iterator[Waiting | dict[str, Any] | None]:
    """Ask `/v1/models` until it answers, pausing `first` s then doubling; yields each
    `Waiting`, then the listing (None: the server has none, e.g. 404). A server never reached is asked `connect_tries` times (the
    request then says how to start one); ListingUnavailable past `deadline` seconds."""
    started = time.monotonic()
    attempt = 0
    while True:
        try:
            response = client.get(base_url + "/models", timeout=min(timeout, 10.0))
            status, text = response.status_code, response.text
        except httpx.TransportError as exc:
            refused = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
            if refused and not reached and attempt + 1 >= connect_tries:
                raise ListingUnavailable(f"{base_url} refuses connections", True) from None
            status, text = 0, ""
            why = "refuses connections" if refused else "did not answer"
        else:
            reached = True
            if status != 503:
                yield parse_json(text) if status == 200 else None
                return
            why = "is loading (HTTP 503 on /v1/models)"
        waited = time.monotonic() - started
        if waited >= deadline:
            raise ListingUnavailable(f"{base_url} {why} after {waited:.0f} s", status == 0)
        pause = min(first * 2**attempt, LISTING_WAIT_CAP, deadline - waited)
        attempt += 1
        yield Waiting(f"{base_url} {why}", waited, pause)
        if cancelled.wait(pause):
            yield None
            return


def llamacpp_window(client: httpx.Client, root: str, timeout: float) -> int | None:
    """llama.cpp's slot context from `/props`; None when it does not say."""
    try:
        response = client.get(root + "/props", timeout=min(timeout, 10.0))
    except httpx.HTTPError:
        return None
    settings = (parse_json(response.text) or {}).get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) and response.status_code == 200 \
        else None
    return n_ctx if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0 else None


class ServerTokens:
    """Counts prompts with the server's own tokenizer (see the module docstring); `count`
    gives None once the server showed it cannot (the caller then estimates)."""

    def __init__(self, client: httpx.Client, root: str, family: str, model: str,
                 template_kwargs: Callable[[], dict[str, Any]], timeout: float) -> None:
        self.family = family
        self.works = family in ("vllm", "llamacpp")
        self._client, self._root, self._model = client, root, model
        self._template_kwargs = template_kwargs
        self._timeout = min(timeout, 10.0)
        self._cache: dict[str, int] = {}

    def count(self, prompt: Prompt) -> int | None:
        if not self.works:
            return None
        key = hashlib.sha256(json.dumps(
            [prompt.text, prompt.messages, prompt.tools], sort_keys=True, default=str
        ).encode("utf-8", "surrogatepass")).hexdigest()
        if key in self._cache:
            return self._cache[key]
        try:
            count = self._vllm(prompt) if self.family == "vllm" else self._llamacpp(prompt)
        except (httpx.HTTPError, ValueError, TypeError, KeyError):
            count = None
        if count is None:
            self.works = False
            return None
        if len(self._cache) >= COUNT_CACHE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = count
        return count

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self._client.post(self._root + path, json=body, timeout=self._timeout)
        response.raise_for_status()
        data = parse_json(response.text)
        if data is None:
            raise ValueError("not a JSON object")
        return data

    def _vllm(self, prompt: Prompt) -> int | None:
        body: dict[str, Any] = {"model": self._model}
        if prompt.text is not None:
            body |= {"prompt": prompt.text, "add_special_tokens": False}
        else:
            body |= {"messages": prompt.messages or [], "add_generation_prompt": True}
            if prompt.tools:
                body["tools"] = prompt.tools
            if self._template_kwargs():
                body["chat_template_kwargs"] = self._template_kwargs()
        count = self._post("/tokenize", body).get("count")
        return count if isinstance(count, int) else None

    def _llamacpp(self, prompt: Prompt) -> int | None:
        text = prompt.text
        if text is None:
            body: dict[str, Any] = {"messages": prompt.messages or []}
            if prompt.tools:
                body["tools"] = prompt.tools
            text = self._post("/apply-template", body).get("prompt")
        if not isinstance(text, str):
            return None
        tokens = self._post("/tokenize", {"content": text, "add_special": False}).get("tokens")
        return len(tokens) if isinstance(tokens, list) else None
