"""The seam between the session and whatever produces model text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Prompt:
    """One turn's input, in the shape its dialect needs.

    Chat dialects fill `messages` (+ `tools` for native tool calls), rendered by the model's own
    chat template (hf) or sent as-is (openai). The text dialect may instead give a raw completion
    prompt in `text`. `stop_after` strings end generation and stay in the output (e.g.
    `</tool_call>`); `stop_before` strings end it and are cut (e.g. a model starting to write its
    own `Observation:`).
    """

    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    text: str | None = None
    stop_after: list[str] = field(default_factory=list)
    stop_before: list[str] = field(default_factory=list)
    max_new_tokens: int = 1024


@dataclass
class Usage:
    """What one generated turn cost."""

    prompt_tokens: int = 0
    new_tokens: int = 0
    cached_tokens: int = 0
    time_to_first_token: float = 0.0
    tokens_per_second: float = 0.0
    # True when the token counts were estimated (no tokenizer, and the server sent no usage).
    estimated: bool = False


@dataclass(frozen=True)
class LoadProgress:
    """How far loading a model has come: `phase` (resolving, loading weights, quantizing,
    adapter, tokenizer, ready), `done` of `total` units where countable (else 0 of 0), and the
    seconds since loading began."""

    phase: str
    done: int = 0
    total: int = 0
    elapsed: float = 0.0

    def describe(self) -> str:
        """`loading weights 120/291 · 12 s`"""
        count = f" {self.done}/{self.total}" if self.total else ""
        return f"{self.phase}{count} · {self.elapsed:.0f} s"


ProgressCallback = Callable[[LoadProgress], None]


class BackendError(Exception):
    """A failure the user must act on; the message says how (which URL, which command, ...)."""


@runtime_checkable
class Backend(Protocol):
    """Streams one model turn at a time. Nothing else in navtui knows which backend runs.

    A backend with a tokenizer may also offer `count_added_tokens(before, after) -> int`, the
    tokens `after` adds to `before` (encoding only the added text); the session's context
    fitter uses it when present (`agent_core.context`).
    """

    name: str
    last_usage: Usage | None

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield text chunks as they are generated; stops at EOS, a stop string or `cancel()`."""
        ...

    def cancel(self) -> None:
        """Stop the generation in progress promptly (callable from another thread)."""
        ...

    def count_tokens(self, prompt: Prompt) -> int:
        """Tokens the prompt takes once rendered (an estimate where no tokenizer is at hand)."""
        ...

    def close(self) -> None:
        """Free the model / connections."""
        ...
