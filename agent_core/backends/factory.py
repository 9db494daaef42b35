"""Build the backend the command line asks for.

`resolve(config)` settles everything that can be known without loading a model: which backend,
the preset's base model / adapter / dialect / context window (explicit `--model`, `--adapter`,
`--dialect` win over a preset's), and a dialect for `auto` (from the preset, the model's name or
the replay script's first turn; otherwise it stays `auto` and the session detects it from the
first reply). `create_backend(config)` then builds the backend, importing only what it needs
(torch and transformers only for `hf`).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.base import Backend, BackendError, ProgressCallback
from agent_core.backends.credentials import split_credentials
from agent_core.backends.presets import PRESETS, resolve_preset
from agent_core.formats import detect_dialect, dialect_from_names

# What `--backend hf` imports: the `local` extra (bitsandbytes is checked only for 4/8-bit).
LOCAL_PACKAGES = ("torch", "transformers", "peft", "accelerate")
# Torch first, the build wanted, so the `local` extra does not pull the multi-GB CUDA one.
LOCAL_INSTALL = (
    "torch first, the build you want: `pip install torch --index-url "
    "https://download.pytorch.org/whl/cpu` (CPU only) or `--index-url "
    "https://download.pytorch.org/whl/cu128` (CUDA 12.8); then `pip install 'navtui[local]'`"
)
DEFAULT_CONTEXT_WINDOW = 16_384
DEFAULT_MAX_NEW_TOKENS = 1024


@dataclass
class BackendConfig:
    """What the user asked for (command-line flags); `resolve` fills in the rest."""

    # hf | openai | replay; None: replay with --script, openai with --base-url, else hf
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


@dataclass(frozen=True)
class BackendSpec:
    """One kind of backend, as the command line knows it: when it is the default, what it needs
    (`check` raises BackendError with the fix), how it is built (importing its module only then)
    and what it is like."""

    name: str
    chosen_by_default: Callable[[BackendConfig], bool]  # with no --backend (first match wins)
    check: Callable[[BackendConfig], None]
    create: Callable[[BackendConfig, ProgressCallback | None, ServerBackoff | None], Backend]
    # Replays a recording: a review turn only if one was recorded, no generation rates, and
    # its first turn gives the dialect away.
    scripted: bool = False
    # Loads the weights itself: a preset gives it the base model and the adapter.
    loads_weights: bool = False


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
    resolved.backend = config.backend or _default_backend(config)
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
        resolved.dialect = dialect_from_names(names) or _dialect_from_script(resolved) or "auto"
    resolved.context_window = resolved.context_window or DEFAULT_CONTEXT_WINDOW
    resolved.max_new_tokens = resolved.max_new_tokens or DEFAULT_MAX_NEW_TOKENS
    return resolved


def _default_backend(config: BackendConfig) -> str:
    return next(spec.name for spec in SPECS.values() if spec.chosen_by_default(config))


def _is_path_like(ref: str) -> bool:
    return ref.startswith(("/", ".", "~")) or ref.count("/") > 1


# Each `_check_*` refuses, with the fix, what would otherwise fail late (after minutes of loading).


def _check_replay(config: BackendConfig) -> None:
    if config.script and not Path(config.script).expanduser().is_file():
        raise BackendError(f"replay script not found: {config.script}; check the --script path")


def _check_openai(config: BackendConfig) -> None:
    if not config.base_url:
        raise BackendError(
            "--backend openai needs --base-url, e.g. --base-url http://localhost:8000/v1"
        )
    if not config.model:
        raise BackendError("--backend openai needs --model: the model name the server serves")


def _check_hf(config: BackendConfig) -> None:
    missing = missing_local_packages()
    if missing:
        raise BackendError(
            f"--backend hf runs the model on this machine and needs {', '.join(missing)}: "
            f"install {LOCAL_INSTALL}; or use a server with --base-url URL"
        )
    if not config.model:
        raise BackendError(
            f"--backend hf needs --model: a preset ({', '.join(PRESETS)}), a Hugging Face id "
            "or a local directory"
        )
    for flag, ref in (("--model", config.model), ("--adapter", config.adapter)):
        if ref and _is_path_like(ref) and not Path(ref).expanduser().exists():
            raise BackendError(f"{flag} {ref}: no such file or directory; check the path")


def missing_local_packages() -> list[str]:
    """The packages of the `local` extra that are not installed (none are imported)."""
    return [name for name in LOCAL_PACKAGES if importlib.util.find_spec(name) is None]


def _dialect_from_script(config: BackendConfig) -> str | None:
    """The dialect the first scripted turn is written in (replay only)."""
    if not spec_for(config.backend or "").scripted or not config.script:
        return None
    from agent_core.backends.replay import load_script

    outputs = load_script(Path(config.script).expanduser())
    return detect_dialect(outputs[0]) if outputs else None


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


def _create_replay(config: BackendConfig, _progress: object, _backoff: object) -> Backend:
    from agent_core.backends.replay import ReplayBackend

    if not config.script:
        raise BackendError('--backend replay needs --script FILE (JSON Lines of {"output": ...})')
    return ReplayBackend(Path(config.script).expanduser())


def _create_openai(
    config: BackendConfig, _progress: object, shared_backoff: ServerBackoff | None
) -> Backend:
    from agent_core.backends.openai_compat import OpenAIBackend

    options = {} if config.request_timeout is None else {"timeout": config.request_timeout}
    return OpenAIBackend(
        config.base_url or "", config.model or "", api_key=config.api_key,
        tokenizer=config.tokenizer, shared_backoff=shared_backoff, **options,
    )


def _create_hf(config: BackendConfig, progress: ProgressCallback | None, _backoff: object) -> Backend:
    from agent_core.backends.hf import HFBackend

    return HFBackend(
        config.model or "",
        adapter=config.adapter,
        load_in_4bit=config.load_in_4bit,
        load_in_8bit=config.load_in_8bit,
        progress=progress,
        threads=config.threads,
    )


# The backends, in the order the default is looked for (`--script`, then `--base-url`, else hf).
SPECS: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec("replay", lambda c: bool(c.script), _check_replay, _create_replay,
                    scripted=True),
        BackendSpec("openai", lambda c: bool(c.base_url), _check_openai, _create_openai),
        BackendSpec("hf", lambda c: True, _check_hf, _create_hf, loads_weights=True),
    )
}
BACKENDS = tuple(sorted(SPECS))  # hf, openai, replay


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
