"""The seam between the session and whatever produces model text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent_core.prompt_types import Prompt, Usage

__all__ = [
    "Backend", "BackendError", "LoadProgress", "ProgressCallback", "Prompt", "Usage",
]


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
