"""Named presets for the models navtui exists for: base model, LoRA adapter, dialect, context.

`--model navigator-8b` picks a preset; explicit `--model/--adapter/--dialect` flags override its
fields (see `agent_core.backends.factory.resolve`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """A base model + LoRA adapter pair and how to talk to it."""

    name: str
    base: str
    adapter: str
    dialect: str
    context_window: int
    max_new_tokens: int = 1024  # a reply's cap unless --max-new-tokens says otherwise
    prompt_profile: str | None = None  # None: the dialect's default profile

    @property
    def model(self) -> str:
        """The model to load: the base (the adapter goes on top of it)."""
        return self.base


PRESETS: dict[str, Preset] = {
    "navigator-8b": Preset(
        name="navigator-8b",
        base="Qwen/Qwen3-8B",
        adapter="ShubhamRasal/qwen3-8b-code-navigator",
        dialect="toolcall",
        context_window=16_384,
        prompt_profile="swesmith",
    ),
    "r2e-30b": Preset(
        name="r2e-30b",
        base="Qwen/Qwen3-30B-A3B",
        adapter="k-l-lambda/qwen3-30b-a3b-r2e-gym-sft",
        dialect="text",
        context_window=4_096,
        # The card generates 256 tokens a turn; 512 leaves 3,584 of 4,096 for the prompt.
        max_new_tokens=512,
        prompt_profile="r2e-card",
    ),
}


def resolve_preset(name: str) -> Preset | None:
    """The preset called `name` (case-insensitive), or None when `name` is a model id or path."""
    return PRESETS.get(name.strip().lower())
