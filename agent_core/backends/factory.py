"""Build the backend the command line asks for.

The backends are the `BackendSpec`s that the `*_spec` modules of this package define
(`agent_core.backends.spec`); they are found by scanning, as dialects are, so adding a backend
is adding one module. `resolve(config)` settles everything that can be known without loading a
model: which backend, the preset's base model / adapter / dialect / context window (explicit
`--model`, `--adapter`, `--dialect` win over a preset's), and a dialect for `auto` (from the
preset, the model's name or the backend's input, e.g. a replay script's first turn; otherwise it
stays `auto` and the session detects it from the first reply). `create_backend(config)` then
builds the backend, importing only what it needs (torch and transformers only for `hf`).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from pathlib import Path

import agent_core.backends
from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.base import Backend, BackendError, ProgressCallback
from agent_core.backends.credentials import split_credentials
from agent_core.backends.presets import resolve_preset
from agent_core.backends.spec import BackendConfig, BackendSpec
from agent_core.formats import dialect_from_names

__all__ = [
    "BACKENDS", "SPECS", "BackendConfig", "BackendSpec", "create_backend", "default_backend",
    "describe", "resolve", "spec_for",
]

DEFAULT_CONTEXT_WINDOW = 16_384
DEFAULT_MAX_NEW_TOKENS = 1024
SPEC_SUFFIX = "_spec"


def _discover() -> dict[str, BackendSpec]:
    """`BACKEND` of every `*_spec` module of the package, in the order the default is looked
    for (`default_order`, then name)."""
    found: dict[str, BackendSpec] = {}
    package = agent_core.backends
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.endswith(SPEC_SUFFIX):
            continue
        spec = getattr(importlib.import_module(f"{package.__name__}.{info.name}"), "BACKEND", None)
        if not isinstance(spec, BackendSpec):
            continue
        if spec.name in found:
            raise ValueError(f"two backends are called {spec.name!r} ({info.name} is the second "
                             "one found): rename one")
        found[spec.name] = spec
    return {s.name: s for s in sorted(found.values(), key=lambda s: (s.default_order, s.name))}


SPECS: dict[str, BackendSpec] = _discover()
BACKENDS: tuple[str, ...] = tuple(sorted(SPECS))  # hf, openai, replay, ...


def spec_for(name: str) -> BackendSpec:
    """The named backend's spec; BackendError names the valid ones."""
    try:
        return SPECS[name]
    except KeyError:
        raise BackendError(
            f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}"
        ) from None


def resolve(config: BackendConfig) -> BackendConfig:
    """A copy with backend, preset, dialect and context window settled; BackendError on bad input.

    Idempotent: resolving a resolved config changes nothing.
    """
    resolved = dataclasses.replace(config)
    resolved.backend = config.backend or default_backend(config)
    spec = spec_for(resolved.backend)
    if resolved.load_in_4bit and resolved.load_in_8bit:
        raise BackendError("choose one of --load-in-4bit and --load-in-8bit, not both")
    spec.check(resolved)
    if resolved.script:  # absolute, so a logged session can be resumed from anywhere
        resolved.script = str(Path(resolved.script).expanduser().resolve())
    preset = resolve_preset(config.model) if config.model else None
    if preset is not None:
        resolved.preset = preset.name
        if spec.loads_weights:
            resolved.model = preset.model
            resolved.adapter = config.adapter or preset.adapter
        if resolved.dialect == "auto":
            resolved.dialect = preset.dialect
        resolved.context_window = config.context_window or preset.context_window
        resolved.max_new_tokens = config.max_new_tokens or preset.max_new_tokens
    if resolved.dialect == "auto":
        names = (resolved.preset, resolved.model, resolved.adapter)
        resolved.dialect = dialect_from_names(names) or spec.dialect_hint(resolved) or "auto"
    resolved.context_window = resolved.context_window or DEFAULT_CONTEXT_WINDOW
    resolved.max_new_tokens = resolved.max_new_tokens or DEFAULT_MAX_NEW_TOKENS
    return resolved


def default_backend(config: BackendConfig) -> str:
    """The backend used when none is named: the first spec whose `chosen_by_default` says so."""
    for spec in SPECS.values():
        if spec.chosen_by_default(config):
            return spec.name
    raise BackendError(f"choose a backend with --backend: one of {', '.join(BACKENDS)}")


def create_backend(
    config: BackendConfig,
    progress: ProgressCallback | None = None,
    shared_backoff: ServerBackoff | None = None,
) -> Backend:
    """The backend `config` describes; BackendError says what to fix. `progress` hears the
    phases of loading a local model (the other backends have nothing to load);
    `shared_backoff` is the busy-server backoff every openai backend of a batch shares."""
    config = resolve(config)
    return spec_for(config.backend or "").create(config, progress, shared_backoff)


def adapter_version(adapter: str | None) -> str:
    """`v2` for an adapter whose navtui manifest says version 2, else ""."""
    from agent_core.backends.identity import read_manifest

    manifest = read_manifest(adapter)
    version = manifest.get("version") if manifest else None
    return f"v{version}" if version is not None else ""


def describe(config: BackendConfig) -> dict[str, str]:
    """What the status bar and the log show about the backend (never the API key)."""
    info = {
        "backend": config.backend or "",
        "preset": config.preset or "",
        "model": config.model or "",
        "adapter": config.adapter or "",
        "adapter_version": adapter_version(config.adapter),
        "quantization": "4-bit" if config.load_in_4bit else "8-bit" if config.load_in_8bit else "",
        "base_url": split_credentials(config.base_url)[0] if config.base_url else "",
        "script": config.script or "",
        "dialect": config.dialect,
    }
    return {k: v for k, v in info.items() if v}
