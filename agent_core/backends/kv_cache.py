"""Keep one conversation's KV cache between turns and reuse its longest valid prefix.

An agent conversation grows by one observation per turn, so the next prompt's token ids usually
start with the previous prompt + reply. Keys/values of a causal model at position i depend only
on tokens 0..i, so the cache stays exact for the common prefix: the next turn prefills only the
ids after it. When history was truncated or elided the common prefix shrinks (possibly to the
system prompt, possibly to nothing) and the cache is cropped to it.
"""

from __future__ import annotations

from typing import Any


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two id lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class PrefixCache:
    """The previous turn's cache (a transformers `Cache`) and the token ids it holds.

    `make_cache` builds an empty cache object; it is called lazily so this module never imports
    transformers itself.
    """

    def __init__(self, make_cache: Any, *, enabled: bool = True) -> None:
        self._make_cache = make_cache
        self.enabled = enabled
        self.ids: list[int] = []
        self.cache: Any = None

    def prepare(self, prompt_ids: list[int]) -> tuple[Any, int]:
        """Return (cache to generate with, number of prompt tokens it already holds).

        At least one prompt token is always left to prefill, since generation needs logits for
        the last prompt position.
        """
        keep = common_prefix(self.ids, prompt_ids) if self.enabled and self.cache is not None else 0
        keep = min(keep, len(prompt_ids) - 1)
        if keep <= 0 or (keep < len(self.ids) and not getattr(self.cache, "is_croppable", True)):
            self.reset()
            self.cache = self._make_cache()
            return self.cache, 0
        if keep < len(self.ids):
            self.cache.crop(keep - len(self.ids))
            self.ids = self.ids[:keep]
        return self.cache, keep

    def store(self, sequence: list[int]) -> None:
        """Record what the cache holds after a turn: the first `get_seq_length()` ids of `sequence`."""
        if not self.enabled or self.cache is None:
            self.reset()
            return
        self.ids = list(sequence[: self.cache.get_seq_length()])

    def reset(self) -> None:
        """Drop the cache (after an error, or when the model changes)."""
        self.ids = []
        self.cache = None
