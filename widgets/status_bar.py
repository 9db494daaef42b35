"""One line at the top: backend/model, dialect, step n/max, tokens/s, context used, policy, state."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from widgets._css import css_beside


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class StatusBar(Widget):
    """Reactive fields; the bar re-renders when any changes."""

    DEFAULT_CSS = css_beside(__file__)

    model: reactive[str] = reactive("")
    dialect: reactive[str] = reactive("")
    step: reactive[int] = reactive(0)
    max_steps: reactive[int] = reactive(0)
    tokens_per_second: reactive[float] = reactive(0.0)
    context_used: reactive[int] = reactive(0)
    context_limit: reactive[int] = reactive(0)
    policy: reactive[str] = reactive("ask")
    state: reactive[str] = reactive("starting")

    def render(self) -> Content:
        parts = [
            Content.from_markup("[b]navtui[/b]"),
            Content(self.model or "model"),
            Content(self.dialect or "?"),
            Content(f"step {self.step}/{self.max_steps}" if self.max_steps else f"step {self.step}"),
            Content(f"{self.tokens_per_second:.0f} tok/s"),
        ]
        if self.context_limit:
            ratio = self.context_used / self.context_limit
            style = "$text-error" if ratio > 0.9 else "$text-warning" if ratio > 0.7 else ""
            parts.append(
                Content.styled(f"ctx {_tokens(self.context_used)}/{_tokens(self.context_limit)}", style)
            )
        policy_style = "$text-warning b" if self.policy.startswith("auto") else ""
        parts.append(Content.styled(self.policy, policy_style))
        parts.append(Content.styled(self.state, "$text-accent"))
        return Content(" │ ").join(parts)
