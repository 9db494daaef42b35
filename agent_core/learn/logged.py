"""Training rows of logged sessions, rendered with the chat template the session's model used.

The tokenizer (for its chat template) is the one the log names (`PromptSent.identity`), or the
one given; its template must hash to the logged one, so a prompt is the text the model read.
Completion-text prompts (the text dialect) need no tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_core.backends.identity import tokenizer_identity
from agent_core.learn.history import ModelTurn, model_turns
from agent_core.learn.rows import Renderer, RowError, Rows, build_rows
from agent_core.trajectory import Trajectory


def logged_tokenizer_ref(turns: Iterable[ModelTurn]) -> str | None:
    """Where the session's tokenizer came from, as its log says."""
    for turn in turns:
        tokenizer = turn.identity.get("tokenizer") or {}
        if tokenizer.get("name_or_path"):
            return str(tokenizer["name_or_path"])
    return None


def load_tokenizer(ref: str) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise RowError(
            "rendering chat prompts needs transformers: install navtui's `local` extra"
        ) from None
    try:
        return AutoTokenizer.from_pretrained(ref)
    except (OSError, ValueError) as error:
        raise RowError(f"cannot load the tokenizer {ref!r}: {error}; pass --tokenizer") from None


def renderer_for(turns: list[ModelTurn], tokenizer: str | Any | None = None) -> Renderer:
    """A Renderer for `turns`: `tokenizer` (a loaded one, or a reference), else the log's."""
    if all(turn.prompt.messages is None for turn in turns):
        return Renderer(None)
    given = tokenizer is not None
    ref = tokenizer if given else logged_tokenizer_ref(turns)
    if ref is None:
        raise RowError(
            "the log does not say which tokenizer rendered the session's chat prompts (an "
            "openai session without --tokenizer, or an older navtui): pass --tokenizer with "
            "the model the session used"
        )
    loaded = load_tokenizer(ref) if isinstance(ref, str) else ref
    if not given:
        logged = {t.identity.get("tokenizer", {}).get("chat_template_sha256") for t in turns}
        found = tokenizer_identity(loaded)["chat_template_sha256"]
        if found not in logged:
            raise RowError(
                f"the chat template of {ref} is not the one the session used (SHA-256 "
                f"{str(found)[:12]}): pass --tokenizer with the model the session used"
            )
    return Renderer(loaded)


def session_rows(trajectory: Trajectory, method: str, tokenizer: str | Any | None = None) -> Rows:
    """The `method` rows (sft | dpo | kto) of one logged session."""
    turns = model_turns(trajectory)
    return build_rows(method, turns, renderer_for(turns, tokenizer))
