"""`--backend openai`: an OpenAI-compatible server (`agent_core.backends.openai_compat`)."""

from __future__ import annotations

from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.base import Backend, BackendError
from agent_core.backends.credentials import check_base_url
from agent_core.backends.local_dirs import check_local
from agent_core.backends.spec import BackendConfig, BackendSpec


def check(config: BackendConfig) -> None:
    if not config.base_url:
        raise BackendError(
            "--backend openai needs --base-url, e.g. --base-url http://localhost:8000/v1"
        )
    if problem := check_base_url(config.base_url):
        raise BackendError(problem)
    if not config.model:
        raise BackendError("--backend openai needs --model: the model name the server serves")
    check_local("--tokenizer", config.tokenizer, "tokenizer")


def create(config: BackendConfig, _progress: object, shared_backoff: ServerBackoff | None) -> Backend:
    from agent_core.backends.openai_compat import OpenAIBackend

    if config.request_timeout is None:
        return OpenAIBackend(config.base_url or "", config.model or "", api_key=config.api_key,
                             tokenizer=config.tokenizer, shared_backoff=shared_backoff)
    return OpenAIBackend(config.base_url or "", config.model or "", api_key=config.api_key,
                         tokenizer=config.tokenizer, shared_backoff=shared_backoff,
                         timeout=config.request_timeout)


BACKEND = BackendSpec(
    "openai", check, create, summary="an OpenAI-compatible server",
    chosen_by_default=lambda config: bool(config.base_url), default_order=20,
    default_note="openai with --base-url",
)
