"""The main screen's plan-mode key: switch the session into plan mode (the repository read-only,
agent_core/executor/plan.py) and back, on the session's thread; the status bar shows PLAN and
the model is told of each switch (agent_core/plan_mode.py). A base of `MainScreen`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work
from textual.screen import Screen

from agent_core.actions import Action, Bash
from agent_core.executor.plan import refusal
from agent_core.plan_mode import set_plan_mode
from widgets.action_card import ActionCard
from widgets.status_bar import StatusBar
from widgets.thought_stream import ThoughtStream

if TYPE_CHECKING:
    from textual.reactive import reactive

    from agent_core.driver import SessionDriver
    from agent_core.events import StepProposed
    from agent_core.session import Session

PLAN_LABEL = "PLAN"
REFUSED = "plan mode: refused, not run · p switches it off"


class PlanKey(Screen[None]):
    """`p`: plan mode on or off (each press flips what was last asked for)."""

    session: Session | None
    driver: SessionDriver | None
    plan_wanted: bool | None = None  # the mode last asked for (None: the session's own)

    if TYPE_CHECKING:
        pending: reactive[StepProposed | None]

        async def run_on_session(self, fn: Callable[[Session], object]) -> object: ...

    def card_subtitle(self, action: Action) -> str:
        """The proposal card's subtitle: that plan mode will refuse the action, or where a
        command runs (with "read-only: plan mode" in the sandbox)."""
        if self.session is None:
            return ""
        executor = self.session.executor
        if executor.plan and refusal(action, executor.launcher.sandboxed) is not None:
            return REFUSED
        return f"bash · {executor.where}" if isinstance(action, Bash) and executor.where else ""

    def show_mode(self) -> None:
        """The status bar's sandbox, and its mode: PLAN while the session is in plan mode."""
        if self.session is None:
            return
        status, executor = self.query_one(StatusBar), self.session.executor
        status.sandbox = executor.launcher.label
        status.mode = PLAN_LABEL if executor.plan else ""

    def action_toggle_plan(self) -> None:
        if self.session is None or self.driver is None:
            return
        wanted = self.plan_wanted
        on = not (self.session.executor.plan if wanted is None else wanted)
        self.plan_wanted = on
        self._switch_plan(on)

    @work(group="plan")
    async def _switch_plan(self, on: bool) -> None:
        changed = await self.run_on_session(lambda session: set_plan_mode(session, on))
        self.show_mode()
        if not changed or self.session is None:
            return
        if self.pending is not None:  # the waiting proposal runs in the new mode
            action = self.pending.step.action
            self.query_one(ActionCard).border_subtitle = self.card_subtitle(action) or action.kind
        sandboxed = self.session.executor.launcher.sandboxed
        said = ("Plan mode on: the repository is read-only in the sandbox; the model reads, "
                "searches and runs tests. p switches it off." if on and sandboxed else
                "Plan mode on (no sandbox): only read-only commands run and file edits are "
                "refused. p switches it off." if on else
                "Plan mode off: the model may change files again.")
        self.notify(said, timeout=3)
        await self.query_one(ThoughtStream).note(f"{said} The model is told.", "user")
