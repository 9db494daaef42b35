"""What a backend is to the command line: one `BackendSpec`, found by scanning.

Each backend registers itself with a module of `agent_core.backends` whose name ends in `_spec`
and which defines `BACKEND`, a `BackendSpec`: its name, when it is the default, what it needs
(`check`), how it is built (`create`, which imports the backend's own modules only when called)
and what it is like. `agent_core.backends.factory` finds the spec modules, so adding a backend
is adding one module; a spec module imports nothing heavy, since every start of navtui reads
them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.base import Backend, ProgressCallback


@dataclass
class BackendConfig:
    """What the user asked for (command-line flags); `factory.resolve` fills in the rest."""

    # a registered backend's name; None: the first whose `chosen_by_default` says so
    backend: str | None = None
    # a preset name, Hugging Face id or local path; for openai, the name the server serves
    model: str | None = None
    adapter: str | None = None
    load_in_4bit: bool = False
    load_in_8bit: bool = False
    base_url: str | None = None
    api_key: str | None = None
    script: str | None = None
    dialect: str = "auto"
    context_window: int | None = None
    preset: str | None = None  # set by `resolve` when `model` named a preset
    max_new_tokens: int | None = None  # None: the preset's, else DEFAULT_MAX_NEW_TOKENS
    request_timeout: float | None = None  # openai: seconds per piece of the stream
    tokenizer: str | None = None  # openai: exact token counts instead of estimates
    threads: int | None = None  # hf on CPU: torch threads (None: see hf_load.cpu_threads)


Create = Callable[[BackendConfig, ProgressCallback | None, ServerBackoff | None], Backend]


def _never(_config: BackendConfig) -> bool:
    return False


def _no_dialect(_config: BackendConfig) -> str | None:
    return None


@dataclass(frozen=True)
class BackendSpec:
    """One kind of backend: when it is the default, what it needs (`check` raises BackendError
    with the fix, before anything slow happens), how it is built and what it is like."""

    name: str
    check: Callable[[BackendConfig], None]
    # (config, progress, shared busy-server backoff) -> the backend; imports its modules now
    create: Create
    # `--backend` help: what it runs ("local transformers")
    summary: str
    # With no --backend, the specs are asked in `default_order` (lowest first) and the first
    # whose `chosen_by_default` is true is used.
    chosen_by_default: Callable[[BackendConfig], bool] = _never
    default_order: int = 50
    # `--backend` help: when it is the default ("replay with --script"); "" when never
    default_note: str = ""
    # The dialect its input gives away before the first reply (a replay script's first turn)
    dialect_hint: Callable[[BackendConfig], str | None] = _no_dialect
    # Replays a recording: a review turn only if one was recorded, no generation rates.
    scripted: bool = False
    # Loads the weights into this process: a preset gives it the base model and the adapter,
    # and `navtui batch` loads it once and shares it between its workers.
    loads_weights: bool = False
