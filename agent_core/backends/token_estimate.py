"""Token counts without a tokenizer.

Qwen's BPE averages close to 3.5 characters per token on code and English prose, and a chat
template adds a handful of tokens per message (`<|im_start|>role\\n` ... `<|im_end|>\\n`). The
estimate errs high on purpose: it feeds context budgets, where running out is worse than trimming
a little early.
"""

from __future__ import annotations

import json
import math

from agent_core.backends.base import Prompt

CHARS_PER_TOKEN = 3.5
TOKENS_PER_MESSAGE = 5


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens in plain text."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_prompt_tokens(prompt: Prompt) -> int:
    """Estimated tokens of a prompt once its chat template (or raw text) is rendered."""
    if prompt.text is not None:
        return estimate_text_tokens(prompt.text)
    total = 0
    for message in prompt.messages or []:
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content)
        total += TOKENS_PER_MESSAGE + estimate_text_tokens(content)
        if message.get("tool_calls"):
            total += estimate_text_tokens(json.dumps(message["tool_calls"]))
    if prompt.tools:
        total += estimate_text_tokens(json.dumps(prompt.tools)) + TOKENS_PER_MESSAGE
    return total
