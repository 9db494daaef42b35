"""The seam between the session and whatever produces model text."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agent_core.finish import FinishReason
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
    """A failure the user must act on; the message says how (which URL, which command, ...).

    Raised while generating, it ends the session with `reason`."""

    reason = FinishReason.ERROR


@runtime_checkable
class Backend(Protocol):
    """Streams one model turn at a time. Nothing else in navtui knows which backend runs.

    `name`, `last_usage`, `stream`, `cancel`, `count_tokens` and `close` are what every backend
    defines; the members below them have defaults, which a backend gets by subclassing `Backend`
    and overrides where it knows better.
    """

    name: str
    last_usage: Usage | None
    # Its text is generated now (False: a recording replayed, whose pace says nothing): front
    # ends show a live tokens/s only for a backend that generates.
    generates: bool = True
    # The text the model last read, chat template applied, where the backend renders it.
    last_rendered: str | None = None
    # (path, body) of the last request sent, where the backend talks to a server.
    last_request: tuple[str, dict[str, Any]] | None = None

    @property
    def notices(self) -> Sequence[str]:
        """Lines for the user, shown as notices when a session starts (e.g. a device advice)."""
        return ()

    @property
    def exact_counts(self) -> bool:
        """`count_tokens` is exact (the model's own tokenizer), not an estimate."""
        return True

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

    def count_added_tokens(self, before: Prompt, after: Prompt) -> int:
        """The tokens `after` adds to `before` (a backend with a tokenizer encodes only the added
        text; the session's context fitter uses it, see `agent_core.context`)."""
        return self.count_tokens(after) - self.count_tokens(before)

    def identity(self) -> dict[str, Any]:
        """What runs, for the log (`agent_core.backends.identity`): at least the backend's name."""
        return {"backend": self.name}

    def skip(self, turns: int) -> None:
        """Pass over `turns` outputs that a resumed session's log already consumed: a scripted
        backend moves past them; a model generates afresh, so by default nothing happens."""
        return None
