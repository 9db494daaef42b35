"""`L`: the approval rules the user's own decisions suggest, each with its evidence; `y` keeps
one (it applies now and is saved in the config file's `[rules]`), `n` declines it (it is not
suggested again), esc closes. Nothing is applied without its key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from agent_core.policy import RulesPolicy
from agent_core.rule_suggestions import DENY, Suggestion, suggest_rules
from agent_core.sanitize import visible
from app import rule_sources
from app.config import AllowRules, save_allow_rule
from agent_core.driver import Allow

if TYPE_CHECKING:
    from app.screens.main import MainScreen

EVIDENCE_SHOWN = 5


def evidence_text(suggestion: Suggestion) -> str:
    """The decisions behind `suggestion`, one a line (the first few, then how many more)."""
    lines = [f"{step.session}  step {step.index}  {step.verdict}  {visible(step.text)}"
             for step in suggestion.evidence[:EVIDENCE_SHOWN]]
    more = len(suggestion.evidence) - EVIDENCE_SHOWN
    return "\n".join(lines + ([f"… and {more} more"] if more > 0 else []))


def find_suggestions(repo: Path | None, rules: AllowRules, live: RulesPolicy) -> list[Suggestion]:
    """The suggestions for `repo` (and every repository, with the consent setting), none that
    the rules in force already have or that the user declined."""
    decided = rule_sources.decisions(repo, rules.suggest_from_all_repositories)
    return suggest_rules(decided, min_count=rules.suggest_after, rules=live,
                         declined=rule_sources.declined())


class RuleSuggestionsScreen(ModalScreen[None]):
    """The suggestions, one per line; the highlighted one's evidence under them. `keep` applies
    a kept suggestion and returns what to tell the user."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("y", "keep", "Keep", id="navtui.suggestions.keep", tooltip="Keep this rule: apply and save it"),
        Binding("n", "decline", "Decline", id="navtui.suggestions.decline",
                tooltip="Decline this rule: it is not suggested again"),
        Binding("escape", "close", "Close", id="navtui.suggestions.close", tooltip="Decide later"),
    ]

    def __init__(self, suggestions: list[Suggestion], keep: Callable[[Suggestion], str]) -> None:
        super().__init__()
        self.suggestions = list(suggestions)
        self.keep = keep

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Rules your decisions suggest · y keeps · n declines · esc closes",
                        classes="dialog-title", id="suggestions-title")
            yield OptionList(*(Option(visible(s.question()), id=s.key) for s in self.suggestions),
                             id="suggestions")
            yield Static("", id="evidence", classes="dialog-hint", markup=False)

    def on_mount(self) -> None:
        self._show_evidence()

    @property
    def highlighted(self) -> Suggestion | None:
        position = self.query_one(OptionList).highlighted
        return None if position is None else self.suggestions[position]

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_evidence()

    def _show_evidence(self) -> None:
        chosen = self.highlighted
        self.query_one("#evidence", Static).update(
            "" if chosen is None else f"Evidence ({len(chosen.evidence)} decisions):\n{evidence_text(chosen)}")

    def action_keep(self) -> None:
        chosen = self.highlighted
        if chosen is not None:
            self.notify(self.keep(chosen), timeout=5)
            self._drop(chosen)

    def action_decline(self) -> None:
        chosen = self.highlighted
        if chosen is not None:
            rule_sources.decline(chosen.key)
            self.notify(f"Declined: {chosen.key} (not suggested again)", timeout=3)
            self._drop(chosen)

    def _drop(self, suggestion: Suggestion) -> None:
        position = self.suggestions.index(suggestion)
        del self.suggestions[position]
        self.query_one(OptionList).remove_option_at_index(position)
        if not self.suggestions:
            self.dismiss(None)
        else:
            self._show_evidence()

    def action_close(self) -> None:
        self.dismiss(None)


class RuleSuggestionKeys:
    """The main screen's `L` (a mixin of `MainScreen`)."""

    @work(exclusive=True, group="modal")
    async def action_rule_suggestions(self) -> None:
        screen = cast("MainScreen", self)
        rules, session, driver = screen.app_rules, screen.session, screen.driver
        repo = session.workspace.root if session is not None else getattr(screen.app, "repo", None)
        live = (driver.approvals if driver is not None else rules.approvals()).rules
        found = await asyncio.to_thread(find_suggestions, repo, rules, live)
        if not found:
            screen.notify(f"No rule to suggest yet: a command or kind you approved (or rejected) "
                          f"every time, at least {rules.suggest_after} times", timeout=5)
            return
        await screen.app.push_screen_wait(RuleSuggestionsScreen(found, self._keep_rule))

    def _keep_rule(self, suggestion: Suggestion) -> str:
        """Apply `suggestion` now and save it for every repository; says what was done."""
        deny, driver = suggestion.rule == DENY, cast("MainScreen", self).driver
        if driver is not None:
            driver.send(Allow(kind=suggestion.kind, prefix=suggestion.prefix, deny=deny))
        saved = save_allow_rule(suggestion.prefix, kind=suggestion.kind, deny=deny)
        what = f"bash commands starting with “{suggestion.prefix}”" if suggestion.prefix \
            else f"every {suggestion.kind} action"
        return f"Always {'rejected' if deny else 'allowed'}: {what} ({saved})"
