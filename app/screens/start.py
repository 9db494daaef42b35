"""The first screen when no issue was given: write (or paste) the issue, or resume a session."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
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


# Sessions handed to the screen per message while the list loads.
BATCH = 5


class StartScreen(Screen[StartChoice]):
    """The issue editor at once; the sessions to resume appear beside it as they are found.

    `load_sessions` (run in a worker thread after the first frame) yields the sessions to offer,
    newest first; the pane appears with the first of them and stays hidden when there are none.
    """

    CSS_PATH = "start.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        Binding("ctrl+s,ctrl+j", "submit", "Start", id="navtui.start.submit", priority=True,
                tooltip="Start a session on this issue (ctrl+s or ctrl+j; both work in tmux)"),
        Binding("ctrl+r", "focus_sessions", "Resume…", id="navtui.start.sessions",
                tooltip="Pick a recent session to resume"),
        Binding("ctrl+q", "app.quit", "Quit", id="navtui.start.quit", tooltip="Leave navtui"),
    ]

    class SessionsFound(Message):
        """More sessions to offer (newest first); `done` once the list is complete."""

        def __init__(self, sessions: list[SessionSummary], done: bool) -> None:
            super().__init__()
            self.sessions = sessions
            self.done = done

    def __init__(
        self, repo_label: str, load_sessions: Callable[[], Iterable[SessionSummary]] | None = None,
    ) -> None:
        super().__init__()
        self.repo_label = repo_label
        self.load_sessions = load_sessions
        self.sessions: list[SessionSummary] = []
        self.sessions_loaded = load_sessions is None

    def compose(self) -> ComposeResult:
        with Horizontal(id="start"):
            with Vertical(id="start-issue"):
                yield Label(f"What should the model fix in {self.repo_label}?", id="start-title",
                            markup=False)
                yield Static("Paste or write the issue (Markdown). ctrl+s or ctrl+j starts.",
                             id="start-hint", markup=False)
                yield TextArea(id="issue-editor", soft_wrap=True, tab_behavior="indent")
                yield Static("", id="start-error", markup=False)
            with Vertical(id="start-sessions"):
                yield Label("Resume a session (Enter)", id="sessions-title")
                yield OptionList(id="sessions")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#start-sessions").display = False
        self.query_one("#issue-editor", TextArea).focus()
        if self.load_sessions is not None:
            self.call_after_refresh(self._load, self.load_sessions)

    @work(thread=True, exit_on_error=False, group="sessions")
    def _load(self, load: Callable[[], Iterable[SessionSummary]]) -> None:
        batch: list[SessionSummary] = []
        try:
            for summary in load():
                batch.append(summary)
                if len(batch) == BATCH:
                    self.post_message(self.SessionsFound(batch, done=False))
                    batch = []
        finally:
            self.post_message(self.SessionsFound(batch, done=True))

    def on_start_screen_sessions_found(self, message: SessionsFound) -> None:
        known = {s.id for s in self.sessions}
        new = [s for s in message.sessions if s.id not in known]  # a copied log repeats an id
        if new:
            self.sessions.extend(new)
            options = self.query_one("#sessions", OptionList)
            options.add_options([session_option(s) for s in new])
            if options.highlighted is None:
                options.highlighted = 0
            self.query_one("#start-sessions").display = True
            self.refresh_bindings()
        self.sessions_loaded = message.done

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
