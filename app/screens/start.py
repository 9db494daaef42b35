"""The first screen when no issue was given: write (or paste) the issue, or resume a session."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from agent_core.sanitize import visible
from agent_core.trajectory import SessionSummary


@dataclass
class StartChoice:
    """`kind`: `issue` (value = the issue text) or `resume` (value = a session id)."""

    kind: str
    value: str


def session_option(summary: SessionSummary) -> Option:
    when = summary.started.strftime("%b %d %H:%M") if summary.started else "?"
    prompt = Content.from_markup(
        "[b]$issue[/b]\n[$text-muted]$when · $steps step(s) · $status · $id[/]",
        issue=visible(summary.issue) or "(no issue text)", when=when, steps=summary.steps,
        status=summary.status, id=summary.id,
    )
    return Option(prompt, id=summary.id)


class StartScreen(Screen[StartChoice]):
    CSS_PATH = "start.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        Binding("ctrl+s,ctrl+j", "submit", "Start", id="navtui.start.submit", priority=True,
                tooltip="Start a session on this issue (ctrl+s or ctrl+j; both work in tmux)"),
        Binding("ctrl+r", "focus_sessions", "Resume…", id="navtui.start.sessions",
                tooltip="Pick a recent session to resume"),
        Binding("ctrl+q", "app.quit", "Quit", id="navtui.start.quit", tooltip="Leave navtui"),
    ]

    def __init__(self, repo_label: str, sessions: list[SessionSummary]) -> None:
        super().__init__()
        self.repo_label = repo_label
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        with Horizontal(id="start"):
            with Vertical(id="start-issue"):
                yield Label(f"What should the model fix in {self.repo_label}?", id="start-title",
                            markup=False)
                yield Static("Paste or write the issue (Markdown). ctrl+s or ctrl+j starts.",
                             id="start-hint", markup=False)
                yield TextArea(id="issue-editor", soft_wrap=True, tab_behavior="indent")
                yield Static("", id="start-error", markup=False)
            if self.sessions:
                with Vertical(id="start-sessions"):
                    yield Label("Resume a session (Enter)", id="sessions-title")
                    yield OptionList(*[session_option(s) for s in reversed(self.sessions)],
                                     id="sessions")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#issue-editor", TextArea).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_sessions":
            return bool(self.sessions)
        return True

    def action_submit(self) -> None:
        text = self.query_one("#issue-editor", TextArea).text.strip()
        if not text:
            self.query_one("#start-error", Static).update(
                "The issue is empty: describe the bug (what happens, what you expected)."
            )
            return
        self.dismiss(StartChoice("issue", text))

    def action_focus_sessions(self) -> None:
        self.query_one("#sessions", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_id:
            self.dismiss(StartChoice("resume", event.option_id))
