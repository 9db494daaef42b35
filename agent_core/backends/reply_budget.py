"""Holding a server to the reply length asked for (`max_tokens`), for servers that ignore it.

Without a tokenizer the client cannot count the server's tokens exactly, so two bounds that a
server honouring `max_tokens` cannot cross are checked instead: a streamed delta carries at least
one new token, so more content deltas than `max_tokens` (plus slack for deltas a server splits,
such as a token shared between reasoning and content) means tokens beyond the limit; and a reply
far longer in characters than any `max_tokens` tokens can spell catches servers that pack many
tokens into each delta.
"""

from __future__ import annotations

from agent_core.backends.token_estimate import CHARS_PER_TOKEN

DELTA_SLACK = 16
# Qwen tokens rarely average over 7 characters even on deeply indented code; at 4x the estimate
# (3.5 characters per token) a reply has ~14 characters per allowed token.
CHARACTER_FACTOR = 4


class ReplyBudget:
    """Counts a streamed reply; `exceeded` turns True once the server has sent more than
    `max_new_tokens` tokens by either bound."""

    def __init__(self, max_new_tokens: int) -> None:
        self.max_new_tokens = max_new_tokens
        self.deltas = 0
        self.characters = 0
        self.exceeded = False

    def feed(self, piece: str) -> bool:
        """Count one delta's text; returns `exceeded`."""
        if piece:
            self.deltas += 1
            self.characters += len(piece)
            self.exceeded = self.exceeded or (
                self.deltas > self.max_new_tokens + DELTA_SLACK
                or self.characters / CHARS_PER_TOKEN
                > CHARACTER_FACTOR * self.max_new_tokens + DELTA_SLACK
            )
        return self.exceeded
