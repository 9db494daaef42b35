"""`--backend hf`: transformers + peft on this machine (`agent_core.backends.hf`).

Registering it imports none of the `local` extra: `check` only looks the packages up.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from agent_core.backends.base import Backend, BackendError, ProgressCallback
from agent_core.backends.presets import PRESETS
from agent_core.backends.spec import BackendConfig, BackendSpec

# What `--backend hf` imports: the `local` extra (bitsandbytes is checked only for 4/8-bit).
LOCAL_PACKAGES = ("torch", "transformers", "peft", "accelerate")
# Torch first, the build wanted, so the `local` extra does not pull the multi-GB CUDA one.
LOCAL_INSTALL = (
    "torch first, the build you want: `pip install torch --index-url "
    "https://download.pytorch.org/whl/cpu` (CPU only) or `--index-url "
    "https://download.pytorch.org/whl/cu128` (CUDA 12.8); then `pip install 'navtui[local]'`"
)


def missing_local_packages() -> list[str]:
    """The packages of the `local` extra that are not installed (none are imported)."""
    return [name for name in LOCAL_PACKAGES if importlib.util.find_spec(name) is None]


def _is_path_like(ref: str) -> bool:
    return ref.startswith(("/", ".", "~")) or ref.count("/") > 1


def check(config: BackendConfig) -> None:
    """Refuse, with the fix, what would otherwise fail after minutes of loading."""
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


def create(config: BackendConfig, progress: ProgressCallback | None, _backoff: object) -> Backend:
    from agent_core.backends.hf import HFBackend

    return HFBackend(
        config.model or "",
        adapter=config.adapter,
        load_in_4bit=config.load_in_4bit,
        load_in_8bit=config.load_in_8bit,
        progress=progress,
        threads=config.threads,
    )


BACKEND = BackendSpec(
    "hf", check, create, summary="local transformers",
    chosen_by_default=lambda _config: True, default_order=90, default_note="else hf",
    loads_weights=True,
)
