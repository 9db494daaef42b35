"""Always allow: pick the command prefix that bash commands may start with from now on."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from agent_core.policy import split_simple_commands
from agent_core.rule_suggestions import TWO_WORD_TOOLS  # (suggested prefixes are as long)


def suggested_prefix(command: str) -> str:
    """The prefix to offer for `command`: its first word, or two for tools like `git`."""
    commands = split_simple_commands(command) or []
    words = commands[0] if commands else command.split()
    if not words:
        return ""
    return " ".join(words[:2] if words[0] in TWO_WORD_TOOLS and len(words) > 1 else words[:1])


@dataclass(frozen=True)
class AllowChoice:
    """The prefix to allow, and whether for every repository (kept in the config file)."""

    prefix: str
    everywhere: bool = False


class AllowPrefixScreen(ModalScreen[AllowChoice | None]):
    """Returns the prefix to allow (this proposal runs too), or None when cancelled."""

    CSS_PATH = "modal.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="navtui.modal.cancel", tooltip="Do not add a rule"),
        Binding("ctrl+y", "everywhere", "Everywhere", id="navtui.allow.everywhere", priority=True,
                tooltip="Allow it in every repository (saved in navtui's config file)"),
    ]

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Always allow bash commands starting with:", classes="dialog-title")
            yield Input(suggested_prefix(self.command), id="prefix")
            yield Label(
                "Whole words only. A compound command (&&, ;, |) is allowed only when every part "
                "matches an allowed prefix. Enter allows it in this session and runs this one; "
                "ctrl+y allows it in every repository (saved in the config file); Esc cancels.",
                classes="dialog-hint", markup=False,
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose(everywhere=False)

    def action_everywhere(self) -> None:
        self._choose(everywhere=True)

    def _choose(self, *, everywhere: bool) -> None:
        prefix = self.query_one("#prefix", Input).value.strip()
        self.dismiss(AllowChoice(prefix, everywhere) if prefix else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
