"""A chat prompt as a model reads it: the tokenizer's chat template, in one place.

The hf backend renders what it generates from with it; learning and the training exports render
the very same text for each logged turn (so a row's prompt is byte for byte what the model read);
the token counters render it without the generation prompt. The switches inference passed to
the template (Qwen3's `enable_thinking`) are logged with the backend's identity and read back
here by `template_kwargs`.
"""

from __future__ import annotations

from typing import Any

from agent_core.backends.base import BackendError
from agent_core.prompt_types import Prompt

# Stands for an assistant message's text while finding what the template writes after it.
_MARK = "\u2063navtui-end-of-turn\u2063"


def render_prompt(
    tokenizer: Any, prompt: Prompt, template_kwargs: dict[str, Any] | None = None,
    label: str = "the model",
) -> str:
    """The prompt as the model reads it: messages through the tokenizer's chat template (ending
    with the generation prompt), or the completion text as it is."""
    if prompt.messages is not None:
        if not tokenizer.chat_template:
            raise BackendError(
                f"{label} has no chat template: use a text-dialect prompt or a chat model"
            )
        rendered: str = tokenizer.apply_chat_template(
            prompt.messages,
            tools=prompt.tools,
            add_generation_prompt=True,
            tokenize=False,
            **(template_kwargs or {}),
        )
        return rendered
    if prompt.text:
        return prompt.text
    raise BackendError("empty prompt: neither messages nor text were given")


def render_without_generation_prompt(tokenizer: Any, prompt: Prompt,
                                     template_kwargs: dict[str, Any]) -> str:
    """The prompt's text up to its last message (counting the tokens one turn adds)."""
    if prompt.text is not None:
        return prompt.text
    rendered: str = tokenizer.apply_chat_template(
        prompt.messages or [], tools=prompt.tools, add_generation_prompt=False, tokenize=False,
        **template_kwargs,
    )
    return rendered


def assistant_turn_end(tokenizer: Any) -> str:
    """What the chat template writes right after an assistant message's text (trailing
    whitespace aside), e.g. Qwen's `<|im_end|>`; the tokenizer's EOS token otherwise."""
    messages = [{"role": "user", "content": "u"}, {"role": "assistant", "content": _MARK}]
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    after = text.split(_MARK, 1)[1].rstrip() if _MARK in text else ""
    return after or (tokenizer.eos_token or "")


def template_kwargs(identity: dict[str, Any]) -> dict[str, Any]:
    """The chat-template switches inference used (Qwen3's `enable_thinking`), from the
    backend's logged identity."""
    generation = identity.get("generation") or {}
    thinking = generation.get("enable_thinking", generation.get("thinking"))
    return {} if thinking is None else {"enable_thinking": thinking}
