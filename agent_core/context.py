"""Fit a conversation into the model's context window, cheaply and without breaking the KV cache.

A `ContextFitter` lives as long as a session. It counts what each turn adds to the prompt once
(with the backend's own tokenizer when it has one) and keeps a *plan*: the oldest `cut` turns
replaced by one note, the others shown as they are. Between trims a new turn only appends to the
prompt, so the backend's KV cache of the previous prompt stays valid and only the new turn is
prefilled.

When the prompt would pass the high-water mark (the limit minus a small slack), one trim makes
room for many turns: it keeps the newest turns (older observations among them cut to head + tail)
up to the low-water mark and replaces everything older, the model's replies included, by a note
that says how many steps and lines were cut. The issue and the last `keep_last` turns always stay;
if those alone do not fit, their observations are cut to head + tail, and as a last resort they
are elided too. A turn whose observation alone would fill half the window is cut once, when it
arrives. `ContextOverflow` is raised only when the fixed part (system prompt, issue, tools)
leaves no room: history never overflows the window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent_core import prompts
from agent_core.prompt_types import Prompt
from agent_core.prompts import Turn

Build = Callable[[list[Turn]], Prompt]
Count = Callable[[Prompt], int]
CountAdded = Callable[[Prompt, Prompt], int]


class ContextOverflow(Exception):
    """The prompt cannot be made to fit; the message says by how much and what to change."""


@dataclass
class Fitted:
    """The prompt to send, its size, and what was cut to get there."""

    prompt: Prompt
    tokens: int
    capped: int = 0  # turns shown with their observation cut to head + tail
    elided: int = 0  # oldest turns replaced by a note
    # How each capped turn was cut: its position among the turns -> `cap_text`'s `max_chars`.
    cap_chars: dict[int, int] = field(default_factory=dict)


def cap_text(text: str, max_chars: int) -> str:
    """`text` cut to about `max_chars`: its head and tail around a note saying what was cut."""
    if len(text) <= max_chars:
        return text
    half = max(max_chars // 2, 1)
    head = text[:half]
    if "\n" in head:
        head = head[: head.rindex("\n") + 1]
    tail = text[-half:]
    if "\n" in tail[:-1]:
        tail = tail[tail.index("\n") + 1 :]
    end = len(text) - len(tail)
    middle = text[len(head) : end]
    whole_lines = (not head or head.endswith("\n")) and text[end - 1] == "\n"
    if whole_lines:
        note = prompts.omitted_lines_note(middle.count("\n"))
    else:
        note = prompts.omitted_chars_note(len(middle))
    separator = "" if head.endswith("\n") or not head else "\n"
    return f"{head}{separator}{note}\n{tail}"


def _lines(turn: Turn) -> int:
    return sum(text.count("\n") + 1 for text in (turn.assistant, turn.observation) if text)


class ContextFitter:
    """Keeps one session's prompt within `limit` tokens; see the module docstring.

    `build` makes the prompt from turns; `count` gives a prompt's exact tokens; `count_added`
    (optional, faster) gives the tokens `after` adds to `before` when it extends it. `low_water`
    is the share of the history's room a trim leaves filled.
    """

    def __init__(
        self,
        build: Build,
        count: Count,
        limit: int,
        *,
        count_added: CountAdded | None = None,
        keep_last: int = 2,
        low_water: float = 0.12,
    ) -> None:
        self.build = build
        self.count = count
        self.limit = limit
        self.count_added = count_added or (lambda before, after: count(after) - count(before))
        self.keep_last = keep_last
        self.low_water = low_water
        self.slack = max(16, limit // 64)
        self._empty: Prompt | None = None
        self._base = 0
        self._tokens: dict[tuple[str, str], int] = {}
        self._sources: list[Turn] = []  # the turns the plan was made for
        self._shown: list[Turn] = []  # how _sources[cut:] are shown
        self._shown_tokens: list[int] = []
        self._cut = 0
        self._note: Turn | None = None
        self._drift = 0  # exact minus estimated tokens, measured at the last trim
        self._cap_chars: dict[tuple[str, str], int] = {}  # (assistant, capped text) -> max_chars

    # --- the public step --------------------------------------------------------------------

    def fit(self, turns: Sequence[Turn]) -> Fitted:
        """The prompt for `turns`, trimmed only when the high-water mark is passed."""
        if self._empty is None:
            self._empty = self.build([])
            self._base = self.count(self._empty)
        if self._base + self.slack > self.limit:
            raise ContextOverflow(
                f"the prompt needs {self._base} tokens before any step, but only {self.limit} "
                "fit (the context window minus room for the reply). Shorten the issue text or "
                "use a model with a larger context window."
            )
        self._follow(list(turns))
        if self._estimate() + self._drift > self.limit - self.slack:
            self._trim()
        prompt = self.build(self._visible())
        cap_chars = {
            self._cut + offset: self._cap_chars[(shown.assistant, shown.observation)]
            for offset, (shown, source) in enumerate(zip(self._shown, self._sources[self._cut :]))
            if shown is not source and shown != source
        }
        return Fitted(
            prompt, self._estimate() + self._drift, capped=len(cap_chars), elided=self._cut,
            cap_chars=cap_chars,
        )

    def shrink(self, limit: int) -> None:
        """Lower the limit (a server refused the prompt as too long); the next `fit` trims."""
        self.limit = min(self.limit, limit)
        self.slack = max(16, self.limit // 64)

    # --- keeping the plan in step with the conversation ---------------------------------------

    def _follow(self, turns: list[Turn]) -> None:
        """Drop planned turns that are gone (undo), then add the new ones at the end."""
        kept = 0
        for planned, turn in zip(self._sources, turns):
            if planned is not turn and planned != turn:
                break
            kept += 1
        if kept < self._cut:
            self._reset()
        elif kept < len(self._sources):
            del self._sources[kept:]
            del self._shown[kept - self._cut :]
            del self._shown_tokens[kept - self._cut :]
        arrival_cap = (self.limit - self._base) // 2
        for turn in turns[len(self._sources) :]:
            shown = turn
            if self._turn_tokens(turn) > arrival_cap:
                shown = self._capped(turn, arrival_cap)
            self._sources.append(turn)
            self._shown.append(shown)
            self._shown_tokens.append(self._turn_tokens(shown))

    def _reset(self) -> None:
        self._sources, self._shown, self._shown_tokens = [], [], []
        self._cut, self._note = 0, None

    def _visible(self) -> list[Turn]:
        return [self._note, *self._shown] if self._note is not None else list(self._shown)

    def _estimate(self) -> int:
        note = self._turn_tokens(self._note) if self._note is not None else 0
        return self._base + note + sum(self._shown_tokens)

    # --- counting -----------------------------------------------------------------------------

    def _turn_tokens(self, turn: Turn) -> int:
        """Tokens `turn` adds to the prompt, counted once per distinct text."""
        key = (turn.assistant, turn.observation)
        tokens = self._tokens.get(key)
        if tokens is None:
            assert self._empty is not None
            tokens = max(self.count_added(self._empty, self.build([turn])), 0)
            self._tokens[key] = tokens
        return tokens

    def _capped(self, turn: Turn, budget: int) -> Turn:
        """`turn` with its observation cut to head + tail so the turn takes about `budget`."""
        tokens = self._turn_tokens(turn)
        chars_per_token = max((len(turn.assistant) + len(turn.observation)) / max(tokens, 1), 1.0)
        room = max(budget - len(turn.assistant) / chars_per_token, 64)
        chars = int(room * chars_per_token)
        capped = turn
        for _ in range(4):
            capped = Turn(turn.assistant, cap_text(turn.observation, chars))
            self._cap_chars[(capped.assistant, capped.observation)] = chars
            tokens = self._turn_tokens(capped)
            if tokens <= budget or chars <= 128:
                break
            chars = max(int(chars * budget / tokens * 0.9), 128)
        return capped

    # --- trimming -----------------------------------------------------------------------------

    def _trim(self) -> None:
        """Cut the oldest turns so the prompt drops to the low-water mark (see module docstring)."""
        room = self.limit - self.slack - self._base
        target = int(room * self.low_water)
        for _ in range(4):
            self._plan_trim(target)
            self._fit_last_turns()
            prompt = self.build(self._visible())
            exact = self.count(prompt)
            self._drift = exact - self._estimate()
            if exact <= self.limit:
                return
            target = max(target - (exact - self.limit) - self.slack, 0)
        raise ContextOverflow(
            f"the prompt needs {exact} tokens even with every earlier step omitted, but only "
            f"{self.limit} fit. Shorten the issue text or use a model with a larger context window."
        )

    def _plan_trim(self, target: int) -> None:
        """Keep the newest turns within `target` tokens (older observations capped); elide the rest."""
        total = len(self._sources)
        last = total - self.keep_last
        old_budget = max(target // 4, 64)
        kept: list[tuple[Turn, int]] = []
        used = 0
        cut = total
        for index in range(total - 1, self._cut - 1, -1):
            shown = self._shown[index - self._cut]
            if index < last and self._turn_tokens(shown) > old_budget:
                shown = self._capped(self._sources[index], old_budget)
            tokens = self._turn_tokens(shown)
            if index < last and used + tokens > target:
                break
            kept.append((shown, tokens))
            used += tokens
            cut = index
        kept.reverse()
        self._set_cut(cut, [shown for shown, _ in kept], [tokens for _, tokens in kept])

    def _set_cut(self, cut: int, shown: list[Turn], tokens: list[int]) -> None:
        self._cut = cut
        self._shown, self._shown_tokens = shown, tokens
        lines = sum(_lines(turn) for turn in self._sources[:cut])
        self._note = Turn("", prompts.elided_turns_note(cut, lines)) if cut else None

    def _fit_last_turns(self) -> None:
        """When the kept turns alone pass the limit: cap their observations, then elide them."""
        ceiling = self.limit - self.slack
        if self._estimate() <= ceiling or not self._shown:
            return
        share = (ceiling - self._estimate() + sum(self._shown_tokens)) // len(self._shown)
        for offset, shown in enumerate(self._shown):
            if self._shown_tokens[offset] > share:
                self._shown[offset] = self._capped(self._sources[self._cut + offset], max(share, 64))
                self._shown_tokens[offset] = self._turn_tokens(self._shown[offset])
        while self._estimate() > ceiling and self._shown:
            self._set_cut(self._cut + 1, self._shown[1:], self._shown_tokens[1:])


def shown_turns(turns: Sequence[Turn], elided: int, cap_chars: dict[int, int]) -> list[Turn]:
    """The turns a prompt showed, rebuilt from the conversation and how it was fitted (a
    `Fitted`'s `elided` and `cap_chars`): the note for the elided ones, then the rest, capped."""
    note = [Turn("", prompts.elided_turns_note(elided, sum(_lines(t) for t in turns[:elided])))]
    shown = [
        Turn(turn.assistant, cap_text(turn.observation, cap_chars[position]))
        if position in cap_chars else turn
        for position, turn in enumerate(turns[elided:], start=elided)
    ]
    return note + shown if elided else shown


def fit_prompt(
    turns: Sequence[Turn],
    build: Build,
    count: Count,
    limit: int,
    keep_last: int = 2,
) -> Fitted:
    """One-shot fit of `turns` (a session keeps a `ContextFitter` instead, to reuse its plan)."""
    return ContextFitter(build, count, limit, keep_last=keep_last).fit(turns)
