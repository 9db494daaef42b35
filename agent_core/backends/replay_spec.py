"""`--backend replay`: a JSON Lines script of model turns (`agent_core.backends.replay`)."""

from __future__ import annotations

from pathlib import Path

from agent_core.backends.base import Backend, BackendError
from agent_core.backends.spec import BackendConfig, BackendSpec


def check(config: BackendConfig) -> None:
    if config.script and Path(config.script).expanduser().is_dir():
        raise BackendError(f"--script {config.script} is a directory; give the script's file")
    if config.script and not Path(config.script).expanduser().is_file():
        raise BackendError(f"replay script not found: {config.script}; check the --script path")


def create(config: BackendConfig, _progress: object, _backoff: object) -> Backend:
    from agent_core.backends.replay import ReplayBackend

    if not config.script:
        raise BackendError('--backend replay needs --script FILE (JSON Lines of {"output": ...})')
    return ReplayBackend(Path(config.script).expanduser())


def script_dialect(config: BackendConfig) -> str | None:
    """The dialect the first scripted turn is written in."""
    if not config.script:
        return None
    from agent_core.backends.replay import load_script
    from agent_core.formats import detect_dialect

    outputs = load_script(Path(config.script).expanduser())
    return detect_dialect(outputs[0]) if outputs else None


BACKEND = BackendSpec(
    "replay", check, create, summary="a script",
    chosen_by_default=lambda config: bool(config.script), default_order=10,
    default_note="replay with --script", dialect_hint=script_dialect, scripted=True,
)
