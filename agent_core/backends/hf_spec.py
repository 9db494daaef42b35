"""`--backend hf`: transformers + peft on this machine (`agent_core.backends.hf`).

Registering it imports none of the `local` extra: `check` only looks the packages up.
"""

from __future__ import annotations

import importlib.util

from agent_core.backends.base import Backend, BackendError, ProgressCallback
from agent_core.backends.hf_load import cpu_threads
from agent_core.backends.local_dirs import check_local
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


# Said with "needs --model": what else there is for someone who has no model yet.
NO_MODEL_ALTERNATIVES = ("or a server's model with --base-url URL; `navtui demo` tries the app "
                         "without a model")


def missing_local_packages() -> list[str]:
    """The packages of the `local` extra that are not installed (none are imported)."""
    return [name for name in LOCAL_PACKAGES if importlib.util.find_spec(name) is None]


def check(config: BackendConfig) -> None:
    """Refuse, with the fix, what would otherwise fail after seconds or minutes of loading: the
    model first (a new user without one is told to give one, not to install torch for it)."""
    if not config.model:
        raise BackendError(
            f"--backend hf needs --model: a preset ({', '.join(PRESETS)}), a Hugging Face id "
            f"or a local directory; {NO_MODEL_ALTERNATIVES}"
        )
    check_local("--model", config.model, "model")
    check_local("--adapter", config.adapter, "adapter")
    missing = missing_local_packages()
    if missing:
        raise BackendError(
            f"--backend hf runs the model on this machine and needs {', '.join(missing)}: "
            f"install {LOCAL_INSTALL}; or use a server with --base-url URL"
        )
    cpu_threads(config.threads)  # a bad $NAVTUI_THREADS is refused now, not after the load


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
