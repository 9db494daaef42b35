"""Fit a conversation into the model's context window before it is sent.

Token counts come from the backend (the model's own tokenizer, or an estimate where none is at
hand). When the prompt is too long, in this order:

1. long observations of older turns are cut to head + tail ("[N lines omitted]"),
2. the oldest observations are replaced by "[N lines omitted]", oldest first,
3. the observations of the last turns are cut to head + tail.

The issue, every assistant turn and the last `keep_last` observations' head and tail always stay.
If the prompt still does not fit, `ContextOverflow` says so: an over-long prompt is never sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from agent_core.backends.base import Prompt


class HasObservation(Protocol):
    observation: str


T = TypeVar("T", bound=HasObservation)


class ContextOverflow(Exception):
    """The prompt cannot be made to fit; the message says by how much and what to change."""


@dataclass
class Fitted:
    """The prompt to send, its size, and what was cut to get there."""

    prompt: Prompt
    tokens: int
    capped: int = 0
    elided: int = 0


def omitted_marker(lines: int) -> str:
    return f"[{lines} lines omitted]"


def cap_text(text: str, max_chars: int) -> str:
    """`text` cut to about `max_chars`: its head and tail around an omitted-lines marker."""
    if len(text) <= max_chars:
        return text
    half = max(max_chars // 2, 1)
    head = text[:half]
    if "\n" in head:
        head = head[: head.rindex("\n") + 1]
    tail = text[-half:]
    if "\n" in tail[:-1]:
        tail = tail[tail.index("\n") + 1 :]
    middle = text[len(head) : len(text) - len(tail)]
    marker = omitted_marker(max(middle.count("\n"), 1))
    separator = "" if head.endswith("\n") or not head else "\n"
    return f"{head}{separator}{marker}\n{tail}"


def elide_text(text: str) -> str:
    """What stays of an old observation once it is dropped."""
    return omitted_marker(text.count("\n") + 1)


def prompt_chars(prompt: Prompt) -> int:
    """Characters of text the prompt carries (used to turn a token budget into characters)."""
    total = len(prompt.text or "")
    for message in prompt.messages or []:
        total += len(_content_text(message.get("content")))
        for call in message.get("tool_calls") or []:
            total += len(str(call))
    return total


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _replace_observations(
    turns: Sequence[T], indices: range, change: Callable[[str], str]
) -> list[T]:
    return [
        dataclasses.replace(turn, observation=change(turn.observation)) if i in indices else turn
        for i, turn in enumerate(turns)
    ]


def fit_prompt(
    turns: Sequence[T],
    build: Callable[[list[T]], Prompt],
    count: Callable[[Prompt], int],
    limit: int,
    keep_last: int = 2,
) -> Fitted:
    """Build the prompt from `turns`, shrinking observations until it takes <= `limit` tokens."""
    turns = list(turns)
    prompt = build(turns)
    tokens = count(prompt)
    if tokens <= limit:
        return Fitted(prompt, tokens)

    chars_per_token = max(prompt_chars(prompt) / max(tokens, 1), 1.0)
    cap_chars = int(max(limit // 8, 64) * chars_per_token)
    old = range(0, max(len(turns) - keep_last, 0))
    recent = range(old.stop, len(turns))

    capped_turns = _replace_observations(turns, old, lambda text: cap_text(text, cap_chars))
    capped = sum(a.observation != b.observation for a, b in zip(turns, capped_turns))
    prompt = build(capped_turns)
    tokens = count(prompt)
    if tokens <= limit:
        return Fitted(prompt, tokens, capped=capped)

    elided, prompt, tokens = _elide_oldest(capped_turns, old.stop, build, count, limit)
    turns = _replace_observations(capped_turns, range(elided), elide_text)
    if tokens <= limit:
        return Fitted(prompt, tokens, capped=capped, elided=elided)

    last_turns = _replace_observations(turns, recent, lambda text: cap_text(text, cap_chars))
    capped += sum(a.observation != b.observation for a, b in zip(turns, last_turns))
    prompt = build(last_turns)
    tokens = count(prompt)
    if tokens <= limit:
        return Fitted(prompt, tokens, capped=capped, elided=elided)
    raise ContextOverflow(
        f"the prompt needs {tokens} tokens even with old observations cut, but only {limit} fit "
        "(the context window minus room for the reply). Shorten the issue text or use a "
        "model with a larger context window."
    )


def _elide_oldest(
    turns: list[T],
    candidates: int,
    build: Callable[[list[T]], Prompt],
    count: Callable[[Prompt], int],
    limit: int,
) -> tuple[int, Prompt, int]:
    """Fewest oldest observations to elide so the prompt fits (binary search; all if none fits)."""
    lo, hi = 1, candidates
    best: tuple[int, Prompt, int] | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        prompt = build(_replace_observations(turns, range(mid), elide_text))
        tokens = count(prompt)
        if tokens <= limit:
            best = (mid, prompt, tokens)
            hi = mid - 1
        else:
            lo = mid + 1
    if best is not None:
        return best
    prompt = build(_replace_observations(turns, range(candidates), elide_text))
    return candidates, prompt, count(prompt)
