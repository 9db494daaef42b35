"""What a turn adds to a prompt, counted with a real tokenizer by encoding only the added text.

A context fitter asks this once per turn (`agent_core.context`): rendering both prompts with the
chat template is cheap, tokenizing the whole prompt every turn is not. Chat templates end each
message with a special token, so tokens never merge across the boundary and the count is exact.
"""

from __future__ import annotations

from typing import Any

from agent_core.backends.base import Prompt
from agent_core.backends.chat_template import render_without_generation_prompt


class AddedTokenCounter:
    """`count(before, after)`: tokens `after` adds to `before`; None when it does not extend it."""

    def __init__(self, tokenizer: Any, template_kwargs: dict[str, Any]) -> None:
        self.tokenizer = tokenizer
        self.template_kwargs = template_kwargs
        self._last_before: tuple[Prompt, str] | None = None

    def rendered(self, prompt: Prompt) -> str:
        """The prompt as text, without the generation prompt (that is the same in both)."""
        return render_without_generation_prompt(self.tokenizer, prompt, self.template_kwargs)

    def count(self, before: Prompt, after: Prompt) -> int | None:
        cached = self._last_before  # one read: another thread may replace it meanwhile
        if cached is None or cached[0] is not before:
            cached = self._last_before = (before, self.rendered(before))
        old, new = cached[1], self.rendered(after)
        if not new.startswith(old):
            return None
        return len(self.tokenizer.encode(new[len(old) :], add_special_tokens=False))
