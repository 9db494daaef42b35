"""The per-turn record of what the model read (`PromptSent`), and the prompt rebuilt from it.

The session emits a `PromptSent` after each generated turn (`prompt_sent`): which turns the
prompt was built from, how the context fitter trimmed them, the profile and dialect, and a
SHA-256 of what the backend sent (the rendered text for hf and raw-text prompts, the JSON request
body for a server). `rebuild` makes the same `Prompt` again from the conversation as the log
holds it; `prompt_digest` gives the digest to compare. Logs written before `PromptSent` existed
have none: their prompts are rebuilt untrimmed, with the session's configured profile.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_core import prompts
from agent_core.context import Fitted, shown_turns
from agent_core.events import PromptSent
from agent_core.profiles import Profile, logged_profile
from agent_core.prompt_types import Prompt, Usage, text_sha256

if TYPE_CHECKING:
    from agent_core.backends.base import Backend


def profile_sha256(profile: Profile) -> str:
    """A digest of the profile's whole content (a profile file edited later is noticed)."""
    return hashlib.sha256(json.dumps(profile.data, sort_keys=True, default=str).encode()).hexdigest()


def request_sha256(body: dict[str, Any]) -> str:
    """The digest of a request body, independent of key order and JSON spacing."""
    return text_sha256(json.dumps(body, sort_keys=True, ensure_ascii=False))


def built_sha256(prompt: Prompt) -> str:
    """The digest of the prompt navtui built: its text, or its messages and tools."""
    if prompt.text is not None:
        return text_sha256(prompt.text)
    shown = {"messages": prompt.messages, "tools": prompt.tools}
    return text_sha256(json.dumps(shown, sort_keys=True, ensure_ascii=False))


def prompt_digest(backend: Backend, prompt: Prompt) -> tuple[str, str]:
    """(sha256, what it is of) for the prompt `backend` was last sent (`PromptSent.digest_of`)."""
    rendered = backend.last_rendered
    if isinstance(rendered, str):
        return text_sha256(rendered), "rendered"
    request = backend.last_request
    if request is not None:
        return request_sha256(request[1]), "request"
    return built_sha256(prompt), "rendered" if prompt.text is not None else "messages"


def prompt_sent(
    backend: Backend,
    index: int,
    fitted: Fitted,
    turns: int,
    usage: Usage,
    *,
    dialect: str,
    profile: Profile,
    profile_name: str,
    path_alias: str,
    logged: dict[str, Any] | None,
) -> PromptSent:
    """The record of turn `index`'s prompt, built from the conversation's first `turns` turns
    and just sent to `backend`; the backend's identity goes with it unless it is `logged`
    already."""
    digest, digest_of = prompt_digest(backend, fitted.prompt)
    identity = backend_identity(backend)
    return PromptSent(
        index=index,
        dialect=dialect,
        profile=profile_name,
        profile_sha256=profile_sha256(profile),
        turns=turns,
        elided=fitted.elided,
        cap_chars={str(k): v for k, v in sorted(fitted.cap_chars.items())},
        path_alias=path_alias,
        max_new_tokens=fitted.prompt.max_new_tokens,
        sha256=digest,
        digest_of=digest_of,
        tokens=None if usage.estimated else usage.prompt_tokens,
        identity=None if identity == logged else identity,
        prompt_sha256=built_sha256(fitted.prompt),
    )


def backend_identity(backend: Backend) -> dict[str, Any]:
    """What runs (`Backend.identity`), as the log keeps it."""
    return backend.identity()


def rebuild(sent: PromptSent, issue: str, turns: Sequence[prompts.Turn]) -> Prompt:
    """The prompt `sent` records, from the conversation's turns as they stood (`sent.turns` of
    them); ValueError when the log holds fewer."""
    if len(turns) < sent.turns:
        raise ValueError(
            f"turn {sent.index}: the prompt was built from {sent.turns} turns, the log holds "
            f"{len(turns)}"
        )
    caps = {int(k): int(v) for k, v in sent.cap_chars.items()}
    shown = shown_turns(list(turns[: sent.turns]), sent.elided, caps)
    return prompts.build_prompt(
        sent.dialect, issue, shown, max_new_tokens=sent.max_new_tokens,
        repo_path=sent.path_alias, profile=logged_profile(sent.profile),
    )
