"""What goes to a model and what a turn cost: the records the prompt builders, the context
fitter, the session and the backends all speak (so none of them imports another for them)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Prompt:
    """One turn's input, in the shape its dialect needs.

    Chat dialects fill `messages` (+ `tools` for native tool calls), rendered by the model's own
    chat template (hf) or sent as-is (openai). The text dialect may instead give a raw completion
    prompt in `text`. `stop_after` strings end generation and stay in the output (e.g.
    `</tool_call>`); `stop_before` strings end it and are cut (e.g. a model starting to write its
    own `Observation:`).
    """

    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    text: str | None = None
    stop_after: list[str] = field(default_factory=list)
    stop_before: list[str] = field(default_factory=list)
    max_new_tokens: int = 1024


@dataclass
class Usage:
    """What one generated turn cost."""

    prompt_tokens: int = 0
    new_tokens: int = 0
    cached_tokens: int = 0
    time_to_first_token: float = 0.0
    tokens_per_second: float = 0.0
    # True when the token counts were estimated (no tokenizer, and the server sent no usage).
    estimated: bool = False


def text_sha256(text: str) -> str:
    """The digest a prompt's text is logged by (`PromptSent.sha256`); lone surrogates kept."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
