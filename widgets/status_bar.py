"""One line at the top: backend/model, dialect, step n/max, tokens/s, context used, policy, state,
PLAN in plan mode, and the sandbox ("sandbox", "sandbox+net", with "· N exposed" when it shows
paths of the user's toolchain read-only, "no sandbox" when it fell back; nothing when chosen off).

tokens/s is shown only when set (> 0): front ends set it from real token counts, never estimates.
A wait (`show_wait`: a busy or loading server, a silent one, a retry's pause) replaces the state
until the next try is due, or until the next wait or turn says otherwise.
While a turn streams, `live_tokens` (and `live_rate`, where the backend generates) show the
turn's tokens so far and their rate since its first token, estimated (`~`), until the real
count comes.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from agent_core.events import UsageReported
from agent_core.turn_clock import TurnClock
from widgets._css import css_beside

LIVE_EVERY = 0.25  # seconds between redraws of the live figures (not one per token)


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _rate(per_second: float) -> str:
    """`12 tok/s`, `0.4 tok/s` (a slow CPU's rate is not 0)."""
    return f"{per_second:.1f} tok/s" if per_second < 10 else f"{per_second:.0f} tok/s"


class StatusBar(Widget):
    """Reactive fields; the bar re-renders when any changes."""

    DEFAULT_CSS = css_beside(__file__)

    model: reactive[str] = reactive("")
    dialect: reactive[str] = reactive("")
    step: reactive[int] = reactive(0)
    max_steps: reactive[int] = reactive(0)
    tokens_per_second: reactive[float] = reactive(0.0)
    live_tokens: reactive[int] = reactive(0)  # 0: no turn streams
    live_rate: reactive[float] = reactive(0.0)
    context_used: reactive[int] = reactive(0)
    context_limit: reactive[int] = reactive(0)
    estimated: reactive[bool] = reactive(False)  # token figures are estimates: shown with "~"
    policy: reactive[str] = reactive("ask")
    state: reactive[str] = reactive("starting")
    sandbox: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")  # "PLAN" in plan mode
    waiting: reactive[str] = reactive("")

    def show_wait(self, reason: str, waited_s: float, next_try_s: float | None) -> None:
        """Say a wait in place of the state (cleared when the next try is due)."""
        said = f"waiting: {reason} · {waited_s:.0f} s"
        if next_try_s is not None:
            said += f" · next try in {next_try_s:.0f} s"
        self.waiting = said
        if next_try_s is not None:
            self.set_timer(next_try_s + 0.5, lambda: self._clear_wait(said))

    def _clear_wait(self, said: str) -> None:
        if self.waiting == said:
            self.waiting = ""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._clock = TurnClock()
        self._live_at = 0.0

    def turn_started(self, now: float) -> None:
        self._clock.start(now)
        self._live_at = 0.0

    def streamed(self, text: str, now: float, rates: bool) -> None:
        """Text of the turn streamed at `now`: the live figures, redrawn every `LIVE_EVERY` s
        (`rates`: the backend generates, so its pace is a rate)."""
        self._clock.feed(text, now)
        if now - self._live_at >= LIVE_EVERY:
            self._live_at = now
            self.live_tokens = max(1, self._clock.tokens)
            self.live_rate = self._clock.rate(now) if rates else 0.0

    def turn_ended(self) -> None:
        self.live_tokens, self.live_rate = 0, 0.0

    def show_usage(self, event: UsageReported) -> None:
        """The turn's real figures: context used, and tokens/s where counted, not estimated."""
        self.turn_ended()
        self.context_used = event.context_tokens
        self.context_limit = event.context_limit
        self.estimated = event.context_estimated or event.usage.estimated
        if not event.usage.estimated:
            self.tokens_per_second = event.usage.tokens_per_second

    @property
    def _about(self) -> str:
        return "~" if self.estimated else ""

    def render(self) -> Content:
        # (priority, part): the lowest priorities are dropped first when the bar is too narrow.
        parts: list[tuple[int, Content]] = [
            (9, Content.from_markup("[b]navtui[/b]")),
            (8, Content.styled(self.waiting, "$text-warning b") if self.waiting
             else Content.styled(self.state, "$text-accent b")),
            (7, Content(f"step {self.step}/{self.max_steps}" if self.max_steps else f"step {self.step}")),
            (6, Content.styled(self.policy, "$text-warning b" if self.policy.startswith("auto") else "")),
            (3, Content(self.model or "model")),
            (2, Content(self.dialect or "?")),
        ]
        if self.live_tokens > 0:
            rate = f" · ~{_rate(self.live_rate)}" if self.live_rate > 0 else ""
            parts.append((4, Content(f"~{_tokens(self.live_tokens)} tok{rate}")))
        elif self.tokens_per_second > 0:  # 0: no real token count (e.g. a replay) or none yet
            parts.append((4, Content(f"{self._about}{_rate(self.tokens_per_second)}")))
        if self.mode:
            parts.append((8, Content.styled(self.mode, "$text-warning b reverse")))
        if self.sandbox:
            style = "$text-success" if self.sandbox.startswith("sandbox") else "$text-warning b"
            parts.append((6, Content.styled(self.sandbox, style)))
        if self.context_limit:
            ratio = self.context_used / self.context_limit
            style = "$text-error" if ratio > 0.9 else "$text-warning" if ratio > 0.7 else ""
            used = f"ctx {self._about}{_tokens(self.context_used)}/{_tokens(self.context_limit)}"
            parts.append((5, Content.styled(used, style)))
        separator = Content(" │ ")
        width = self.content_size.width or 80
        while len(parts) > 1:
            line = separator.join(part for _, part in parts)
            if line.cell_length <= width:
                return line
            parts.remove(min(parts, key=lambda item: item[0]))
        return parts[0][1]
