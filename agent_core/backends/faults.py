"""Server faults that cost a retry, not the session.

A backend raises one of these instead of a plain `BackendError` when the fault is not the
user's to fix: the session trims and retries (`ContextTooLong`), restarts the turn
(`StreamDropped`), or stops with a named reason that leaves the session resumable
(`ServerUnavailable`, exit 2 in `--auto`).

A fault inside a reply (`StreamDropped` and its kinds: a chunk that does not parse, an error
event, a read stall past `--request-timeout`, a reply past the byte caps) discards the partial
reply and the turn is retried after a pause; never is a damaged reply read as the model's. A
reply cut with `finish_reason: "length"` before `max_tokens` (`WindowFull`) means the server's
window is full: the prompt is trimmed to leave room and the turn retried.

`context_too_long(message, body)` recognises each server family's context-length error and
reads the token counts it gives:

    vLLM      This model's maximum context length is 16384 tokens. However, your prompt
              contains 17000 input tokens. ... (older: "your request has 17000 input tokens")
    SGLang    The input (17000 tokens) is longer than the model's context length (16384 tokens).
              / Requested token count exceeds the model's maximum context length of 16384
              tokens. You requested a total of 17500 tokens: 17000 tokens from the input ...
    llama.cpp request (17000 tokens) exceeds the available context size (16384 tokens)
              (type exceed_context_size_error, with n_prompt_tokens and n_ctx)
    Ollama    the input length exceeds the context length (no counts; `server/routes.go`)
              / the prompt is longer than the context length currently available to the
              model; shorten the prompt, ... (chat with context shift off, no counts;
              `llm/llama_server.go`)
    transformers serve: no check of its own; generation fails with the model's position limit
"""

from __future__ import annotations

import re
from typing import Any

from agent_core.backends.base import BackendError
from agent_core.finish import FinishReason

# (limit, prompt) patterns, tried in order; each names the groups it has.
_LIMIT_PATTERNS = (
    re.compile(r"maximum context length (?:is|of) (?P<limit>\d+)", re.I),
    re.compile(r"model's context length \((?P<limit>\d+) tokens\)", re.I),
    re.compile(r"available context size \((?P<limit>\d+) tokens\)", re.I),
)
_PROMPT_PATTERNS = (
    re.compile(r"(?P<prompt>\d+) input tokens", re.I),
    re.compile(r"(?P<prompt>\d+) tokens from the input", re.I),
    re.compile(r"input \((?P<prompt>\d+) tokens\)", re.I),
    re.compile(r"request \((?P<prompt>\d+) tokens\)", re.I),
)
_CONTEXT_WORDS = re.compile(
    r"context length|context size|context window|exceed_context_size|context_length_exceeded"
    r"|maximum (?:sequence )?length|too many tokens|input is too long",
    re.I,
)


class ServerFault(BackendError):
    """A fault of the server, not the user's to fix: the session retries or stops resumable."""


class ContextTooLong(ServerFault):
    """The server (or a local model, `refused_by`) refused the prompt as longer than its
    context window.

    `limit` is the window and `prompt_tokens` its count of the prompt, where it said.
    """

    def __init__(self, message: str, limit: int | None = None,
                 prompt_tokens: int | None = None, refused_by: str = "the server") -> None:
        super().__init__(message)
        self.limit = limit
        self.prompt_tokens = prompt_tokens
        self.refused_by = refused_by


class StreamDropped(ServerFault):
    """The reply broke off or cannot be trusted (the connection broke, a chunk did not parse, an
    error event, a stall, a reply past the byte caps); the partial reply is not to be used."""


class StreamMalformed(StreamDropped):
    """A stream chunk was not the JSON object the protocol promises."""


class StreamErrorEvent(StreamDropped):
    """The server reported an error inside the stream (vLLM's engine error, a 5xx event)."""


class StreamStalled(StreamDropped):
    """Nothing arrived for `--request-timeout` seconds (before the first byte or mid-reply)."""


class StreamTooLarge(StreamDropped):
    """A line, an event or the whole reply passed navtui's byte caps (after decompression)."""


class WindowFull(ContextTooLong):
    """The reply was cut (`finish_reason: "length"`) before `max_tokens`: the server's window is
    full. `limit` is the window where known, `prompt_tokens` the server's prompt count and
    `reply_tokens` what it generated before the cut."""

    def __init__(self, message: str, limit: int | None = None, prompt_tokens: int | None = None,
                 reply_tokens: int | None = None) -> None:
        super().__init__(message, limit, prompt_tokens)
        self.reply_tokens = reply_tokens


class ServerUnavailable(ServerFault):
    """The server stayed busy (429/503) past the total deadline; `why` names it briefly."""

    reason = FinishReason.SERVER_UNAVAILABLE

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


def context_too_long(message: str, body: dict[str, Any] | None = None) -> ContextTooLong | None:
    """A `ContextTooLong` when `message` (and the parsed error `body`) is a context-length
    refusal, else None."""
    error = (body or {}).get("error")
    fields = error if isinstance(error, dict) else (body or {})
    known_type = fields.get("type") == "exceed_context_size_error" or fields.get(
        "code") == "context_length_exceeded"
    if not (known_type or _CONTEXT_WORDS.search(message)):
        return None
    limit = _int(fields.get("n_ctx")) or _first(_LIMIT_PATTERNS, message, "limit")
    prompt = _int(fields.get("n_prompt_tokens")) or _first(_PROMPT_PATTERNS, message, "prompt")
    lowered = message.lower()
    if not known_type and limit is None and not ("exceed" in lowered or "longer than" in lowered):
        return None  # e.g. "context length" in a message about something else
    return ContextTooLong(message, limit, prompt)


def _first(patterns: tuple[re.Pattern[str], ...], text: str, group: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(group))
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
