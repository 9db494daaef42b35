"""The main screen: watch the model think, decide on each action, see outputs and diffs."""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from agent_core.actions import Action, Bash, StrReplaceEditor, Submit
from agent_core.events import (
    Event,
    FormatError,
    Notice,
    SessionError,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    TokenStreamed,
    TurnStarted,
    UsageReported,
)
from agent_core.sanitize import visible
from agent_core.steps import (
    GIT_WARNINGS_KEY, USER_EDITS_KEY, Approve, Decision, EditAction, Observation, Quit, Reject,
    StepRecord,
)
from app.config import AllowRules, save_allow_rule
from app.keys import PALETTE, KeyRow, key_rows
from app.screens.allow import AllowPrefixScreen
from app.screens.confirm import ConfirmScreen
from app.screens.edit import EditScreen, edit_text
from app.screens.help import HelpScreen
from app.screens.message import MessageScreen
from app.screens.quit import QuitScreen
from app.screens.reject import RejectScreen
from app.screens.step_detail import StepDetailScreen
from app.session_driver import (
    Allow,
    AutoApproved,
    Call,
    Close,
    Continue,
    Decide,
    DriverEvent,
    EventInbox,
    Paused,
    PolicyChanged,
    SessionDiffReady,
    SessionDriver,
    SetAuto,
    Undo,
    UndoRefused,
    UserCommand,
    UserMessage,
)
from app.stream_split import StreamSplit
from widgets.action_card import ActionCard, action_summary, user_edits_summary
from widgets.diff_view import DiffView, split_diff
from widgets.issue_pane import IssuePane
from widgets.output_log import OutputLog
from widgets.plain_text import plain
from widgets.status_bar import StatusBar
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import ThoughtStream

if TYPE_CHECKING:
    from textual.timer import Timer

    from agent_core.session import Session

# A proposal that took longer than this to generate also gets a toast (the user looked away).
NOTIFY_AFTER_SECONDS = 5.0
# Auto mode: session events are rendered at most this often (seconds), all that arrived together;
# a step that changes nothing takes ~5 ms headless, one that runs a command ~40 ms on a large
# repository, so several steps share one render (five a second: cards and outputs flipping
# faster than that are not read; streamed text is never held back).
AUTO_FRAME = 0.2
# ctrl+c with nothing running asks to quit when pressed again within this many seconds.
INTERRUPT_AGAIN = 2.0



class SessionWake(Message):
    """Session events are waiting in the screen's inbox."""


class MainScreen(Screen[None]):
    CSS_PATH = "main.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("a", "approve", "Approve", id="navtui.approve", tooltip="Run the proposed action"),
        Binding("A", "always_allow", "Always", id="navtui.always_allow",
                tooltip="Approve; from now on this kind or bash prefix"),
        Binding("r", "reject", "Reject", id="navtui.reject", tooltip="Do not run it; tell the model why"),
        Binding("e", "edit", "Edit", id="navtui.edit", tooltip="Change the action before it runs"),
        Binding("u", "undo", "Undo", id="navtui.undo", tooltip="Undo the last step: files and conversation"),
        Binding("w", "rewind", "Rewind", id="navtui.rewind",
                tooltip="Go back to the step selected in the timeline"),
        Binding("m", "message", "Msg", id="navtui.message",
                tooltip="Message the model, or run !command yourself"),
        Binding("t", "toggle_auto", "Auto", id="navtui.auto",
                tooltip="Auto mode: approve all, within the limits"),
        Binding("escape", "stop", "Stop", id="navtui.stop",
                tooltip="Stop the generation or the running command"),
        Binding("g", "continue", "Go on", id="navtui.continue",
                tooltip="Let the model propose again after a stop"),
        Binding("d", "diff", "Diff", id="navtui.diff", show=False,
                tooltip="Switch between step and session diff"),
        Binding("s", "toggle_steps", "Steps", id="navtui.steps", show=False,
                tooltip="Show or hide the step timeline"),
        Binding("question_mark", "help", "Help", id="navtui.help", tooltip="All keys, as mapped now"),
        Binding("q", "quit_session", "Quit", id="navtui.quit",
                tooltip="Quit; the session is saved and resumable"),
    ]

    # Screen state: the Footer and the command palette follow it (`_state_changed`), and so do
    # the header's state word and the card's colour (`_show_state`); nothing else refreshes them.
    pending: reactive[StepProposed | None] = reactive(None, init=False)
    generating: reactive[bool] = reactive(False, init=False)
    running: reactive[bool] = reactive(False, init=False)
    finished: reactive[SessionFinished | None] = reactive(None, init=False)
    paused: reactive[bool] = reactive(False, init=False)
    executed_steps: reactive[int] = reactive(0, init=False)

    def __init__(
        self,
        issue: str,
        *,
        repo_label: str = "",
        auto: bool = False,
        session: Session | None = None,
        loading_message: str = "Loading the model…",
        resumable: bool = True,
    ) -> None:
        super().__init__()
        self.issue = issue
        self.repo_label = repo_label
        self.auto = auto
        self.resumable = resumable
        self.session: Session | None = None
        self.driver: SessionDriver | None = None
        self.inbox: EventInbox | None = None
        self.session_diff = ""
        self._initial = session
        self._mounted = False
        self._shut_down = False
        self._loading_message = loading_message
        self._turn_started = 0.0
        self._turn_index = 0
        self._split = StreamSplit("auto")
        self._announced: StepProposed | None = None  # the last proposal the user was told about
        self._last_error = ""
        self._bindings_due: str | None = None  # the Footer's refresh at the next frame: "always"
        self._bindings_scheduled = False  # ... or "if changed" (a key enabled or disabled)
        self._bindings_shown: tuple[bool | None, ...] = ()
        self._draining = False  # rendering a drain of the inbox: views are shown at its end
        self._views: dict[str, list[Callable[[], None]]] = {}  # view -> what it shows at the end
        self._next_drain = 0.0  # auto mode: session events are rendered at most AUTO_FRAME apart
        self._drain_timer: Timer | None = None
        self._interrupted_at = -INTERRUPT_AGAIN  # the last ctrl+c (it stopped something or hinted)
        self.load_failed = False  # the session could not be built: nothing to lose by quitting
        self.load_stopped = False  # the user stopped the load: the session is dropped once built
        self.crashed = ""  # why the session thread stopped with an error, if it did

    # --- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Horizontal(id="body"):
            yield StepTimeline(id="timeline")
            with Vertical(id="work"):
                yield IssuePane(self.issue, id="issue")
                yield ThoughtStream(id="thoughts")
                yield ActionCard(id="card")
                with TabbedContent(id="lower"):
                    with TabPane("Output", id="tab-output"):
                        yield OutputLog(id="output")
                    with TabPane("Step diff", id="tab-step-diff"):
                        yield DiffView(id="step-diff", empty_text="This step changed no file.")
                    with TabPane("Session diff", id="tab-session-diff"):
                        yield DiffView(id="session-diff", empty_text="No changes yet.")
        # (ctrl+p is in the help; at 80 columns the footer keeps its room for q and ?)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        # The widgets every session event touches, looked up once (not per streamed token).
        self._status, self._card = self.query_one(StatusBar), self.query_one(ActionCard)
        self._thoughts, self._timeline = self.query_one(ThoughtStream), self.query_one(StepTimeline)
        status = self._status
        status.policy = "auto" if self.auto else "ask"
        status.state = "loading"
        self.query_one(ActionCard).show_status("thinking", self._loading_message)
        self._mounted = True
        if self._initial is not None:
            self.attach(self._initial)
        else:
            self.refresh_bindings()  # the model loads: esc stops it

    def show_loading(self, detail: str, model: str, dialect: str) -> None:
        """Until a session is attached: the loading message + `detail` (phase, seconds) on the
        card, the model being loaded in the header."""
        if not self.loading:
            return
        self.query_one(ActionCard).show_status("thinking", f"{self._loading_message} {detail}")
        status = self.query_one(StatusBar)
        status.model, status.dialect, status.state = model, dialect, "loading"

    @property
    def loading(self) -> bool:
        """The model loads (no session yet, and the load neither failed nor was stopped)."""
        return self._mounted and self.session is None and not (self.load_failed or self.load_stopped)

    def stop_loading(self) -> None:
        """esc while the model loads: a load cannot be cut short, so the session it builds is
        dropped once it is there; q leaves at once."""
        self.load_stopped = True
        self.query_one(ActionCard).show_status(
            "idle", "Stopped: the model is dropped as soon as it has loaded. q quits.")
        self.query_one(StatusBar).state = "stopped"
        self.refresh_bindings()

    def show_load_error(self, message: str) -> None:
        """The session could not be built (the model did not load): why, and the fix, on the
        card; q leaves (exit 1)."""
        self.load_failed = True
        self.query_one(ActionCard).show_status("done", f"Could not start: {plain(message)}\n\nq quits.")
        self.query_one(StatusBar).state = "error"
        self.refresh_bindings()

    # --- wiring the session ---------------------------------------------------------------

    @property
    def app_rules(self) -> AllowRules:
        """The allow rules the app was started with (`[rules]` of the config file)."""
        return getattr(self.app, "allow_rules", None) or AllowRules()

    def attach(self, session: Session) -> None:
        """Start driving `session` (built elsewhere, e.g. after loading the model or resumed)."""
        if not self._mounted:
            self._initial = session
            return
        self.session = session
        self.inbox = EventInbox(lambda: self.post_message(SessionWake()))
        self.driver = SessionDriver(session, self.inbox, auto=self.auto)
        for kind in self.app_rules.allow_kinds:  # from the config file's [rules]
            self.driver.rules.allow_kind(kind)
        for prefix in self.app_rules.allow_prefixes:
            self.driver.rules.allow_prefix(prefix)
        status = self.query_one(StatusBar)
        info = session.config.backend_info
        model = str(info.get("model") or info.get("name") or session.backend.name)
        adapter = " ".join(filter(None, (Path(info.get("adapter") or "").name,
                                         info.get("adapter_version"))))
        status.model = f"{model} + {adapter}" if adapter else model
        status.dialect = session.config.dialect
        status.max_steps = session.config.max_steps
        status.state = "starting"
        status.policy = self.driver.policy_label()
        status.sandbox = session.executor.launcher.label
        status.tooltip = visible(session.executor.where) or None  # what the sandbox shows
        if session.executor.launcher.notice and not session.records:
            self.call_later(self.query_one(ThoughtStream).note, session.executor.launcher.notice,
                            "warning")
        if session.issue != self.issue:
            self.issue = session.issue
            self.query_one(IssuePane).set_issue(session.issue)
        timeline = self.query_one(StepTimeline)
        for record in session.records:
            timeline.set_step(record.index, self._record_status(record), self._record_summary(record))
        self.executed_steps = len(self._executed_records())
        if session.records:
            self.call_later(self._show_history, list(session.records))
        self.query_one(ActionCard).show_status("thinking", "Starting the session…")
        self._drive()
        self.refresh_bindings()
        if session.finished is not None:  # resumed after its submit: the finish screen offers more
            self.call_later(self._finished, session.finished)

    async def continue_session(self, text: str) -> None:
        """After the finish: the session goes on, `text` being the model's next turn."""
        await self.query_one(ThoughtStream).note(f"You: {text}", "user")
        await self.run_on_session(lambda session: session.continue_with(text))
        self.finished = None
        self.paused = False

    async def _show_history(self, records: list[StepRecord]) -> None:
        """A resumed session: what happened before, one line per step, and its last output."""
        thoughts = self.query_one(ThoughtStream)
        lines = [f"{r.index}. {self._record_summary(r)} ({self._record_status(r)})" for r in records]
        await thoughts.note("Resumed. Earlier steps:\n" + "\n".join(lines), "info")
        executed = [r for r in records if r.checkpoint is not None]
        if executed:
            last = executed[-1]
            self.query_one(OutputLog).show_observation(
                f"Step {last.index} · {self._summary(last.action or last.proposed.action, width=200)}",
                self._user_observation(last.observation),
            )
            self.query_one("#step-diff", DiffView).set_diff(last.diff)

    @work(thread=True, exit_on_error=False, group="session", name="session")
    def _drive(self) -> None:
        assert self.driver is not None and self.session is not None
        try:
            self.driver.run()
        finally:
            self.session.close()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "session" and event.state == WorkerState.ERROR:
            error = event.worker.error
            message = f"The session stopped: {type(error).__name__}: {error}"
            self.crashed = f"{type(error).__name__}: {error}"
            self.generating = self.running = False
            self.query_one(ActionCard).show_status("done", plain(message))
            self.query_one(StatusBar).state = "error"
            self.notify(visible(message), severity="error", timeout=10)

    def on_unmount(self) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the session thread (idempotent); events that arrive later are not rendered."""
        self._shut_down = True
        if self.driver is not None:
            self.driver.stop_generation()
            if self.running:
                self.driver.interrupt_command()
            self.driver.send(Close())

    # --- screen state -----------------------------------------------------------------------

    def refresh_bindings(self) -> None:
        """Refresh the Footer (and palette) once per frame, however many ask.

        Each refresh rebuilds the Footer's keys (a recompose that re-applies CSS to every key).
        """
        self._bindings_due = "always"
        self._schedule_bindings()

    def _state_changed(self) -> None:
        """Screen state changed: refresh the Footer at the next frame if by then a key is enabled
        or disabled (in auto mode a step sets and clears `pending` and `running` within one
        drain of the inbox, and no key changes)."""
        if self._bindings_due is None:
            self._bindings_due = "if changed"
        self._schedule_bindings()

    def _schedule_bindings(self) -> None:
        if not self._bindings_scheduled:
            self._bindings_scheduled = True
            self.call_after_refresh(self._publish_bindings)

    def _publish_bindings(self) -> None:
        due, self._bindings_due, self._bindings_scheduled = self._bindings_due, None, False
        if not self.is_attached:
            return
        state = self._bindings_state()
        if due == "always" or state != self._bindings_shown:
            self._bindings_shown = state
            super().refresh_bindings()

    def _bindings_state(self) -> tuple[bool | None, ...]:
        """Which of the screen's keys are enabled now (what the Footer shows)."""
        return tuple(self.check_action(binding.action, ()) for binding in self.BINDINGS)

    def watch_pending(self) -> None:
        self._show_state()

    def watch_generating(self) -> None:
        self._show_state()

    def watch_running(self) -> None:
        self._show_state()

    def watch_paused(self) -> None:
        self._show_state()

    def watch_finished(self) -> None:
        self._show_state()

    def watch_executed_steps(self) -> None:
        self._state_changed()

    def _show_state(self) -> None:
        """The header's state word and the card's colour, both from the screen state alone
        (and the Footer's keys, when they change)."""
        self._state_changed()
        if not self._mounted or self.session is None:
            return
        status, card = self._status, self._card
        if self.finished is not None:
            status.state, colour = f"finished: {self.finished.reason}", "done"
        elif self.pending is not None:
            status.state, colour = "waiting for you", "pending"
        elif self.running:
            status.state, colour = "running", "running"
        elif self.generating:
            status.state, colour = "thinking", "thinking"
        elif self.paused:
            status.state, colour = "stopped", "idle"
        else:
            status.state, colour = "working", "idle"
        # (a colour change restyles the card: in auto mode, once per drain)
        self._view("card-colour", lambda: setattr(card, "state", colour))

    # --- session events -------------------------------------------------------------------

    async def on_session_wake(self, message: SessionWake) -> None:
        if self.inbox is None:
            return
        now = time.monotonic()
        held = self.auto and now < self._next_drain
        if held:
            # Auto mode: steps come faster than anyone reads them; what arrives within one
            # AUTO_FRAME is rendered together. Text streamed into the turn being written is not
            # held back: the events up to the last of it are rendered now.
            if self._drain_timer is None:
                self._drain_timer = self.set_timer(self._next_drain - now, self._drain_due)
        else:
            self._next_drain = now + AUTO_FRAME
        self._draining = True
        try:
            for event in self.inbox.drain(live_text=held):
                if self._shut_down:
                    return
                await self.handle_event(event)
        finally:
            self._draining = False
            self._show_views()
        proposal, announced = self.pending, self._announced
        if proposal is not None and proposal is not announced:
            self._announced = proposal
            if announced is None or proposal.step is not announced.step:
                self._ask_for_decision(proposal)

    def _drain_due(self) -> None:
        self._drain_timer = None
        self.post_message(SessionWake())

    def _view(self, name: str, show: Callable[[], None], *, replaces: bool = True) -> None:
        """Show something in view `name` (the card, the output, a diff). In auto mode, while a
        drain is rendered, only the last of what replaces a view's content is shown, at the
        drain's end (with what was added to it after); otherwise at once."""
        if not (self._draining and self.auto):
            show()
        elif replaces or name not in self._views:
            self._views[name] = [show]
        else:
            self._views[name].append(show)

    def _show_views(self) -> None:
        views, self._views = self._views, {}
        if self._shut_down or not views:
            return
        colour = views.pop("card-colour", None)
        for shows in views.values():
            for show in shows:
                show()
        if colour is not None:  # last: the card's colour follows the screen state, as it did
            colour[0]()
        elif "card" in views:
            self._show_state()

    async def handle_event(self, event: Event | DriverEvent) -> None:
        """Render one session or driver event."""
        status, card, thoughts, timeline = self._status, self._card, self._thoughts, self._timeline
        if isinstance(event, SessionStarted):
            status.state = "started"
        elif isinstance(event, TurnStarted):
            self._turn_started, self._turn_index = time.monotonic(), event.index
            self._split = StreamSplit(self.session.config.dialect if self.session else "auto")
            status.step = event.index
            thinking = f"Step {event.index}: the model is thinking…"
            self._view("card", lambda: card.show_status("thinking", thinking))
            self.pending, self.running, self.paused, self.generating = None, False, False, True
            await thoughts.begin_turn(f"Step {event.index}")
        elif isinstance(event, TokenStreamed):
            await self._show_tokens(event)
        elif isinstance(event, UsageReported):
            status.context_used = event.context_tokens
            status.context_limit = event.context_limit
            status.estimated = event.context_estimated or event.usage.estimated
            if not event.usage.estimated:  # tokens/s only from real token counts
                status.tokens_per_second = event.usage.tokens_per_second
        elif isinstance(event, FormatError):
            self.generating = False
            await thoughts.end_turn()
            await thoughts.note(
                f"Step {event.index}: the reply could not be parsed ({event.consecutive} in a row); "
                f"the model is told why:\n{event.message}",
                "warning",
            )
        elif isinstance(event, StepProposed):
            await self._show_proposal(event)
        elif isinstance(event, AutoApproved):
            self._run_on_its_own(event)
        elif isinstance(event, StepExecuted):
            self._show_executed(event.record)
        elif isinstance(event, StepRejected):
            self.running = False
            record = event.record
            timeline.set_step(record.index, "rejected", self._record_summary(record))
            feedback = record.decision.feedback if isinstance(record.decision, Reject) else ""
            await thoughts.note(
                f"You rejected step {record.index}" + (f": {feedback}" if feedback else "."), "user"
            )
        elif isinstance(event, StepUndone):
            self.pending, self.running = None, False
            timeline.drop_after(event.to_index)
            kept = [r for r in self._executed_records() if r.index <= event.to_index]
            self.executed_steps = len(kept)
            step_diff = kept[-1].diff if kept else ""
            self._view("step-diff", lambda: self.query_one("#step-diff", DiffView).set_diff(step_diff))
            changed = ", ".join(event.changed_paths) or "no file changed"
            saved = (f"\nWhat was there before is kept: git restore --source={event.saved_ref}"
                     " -- PATH brings a file back." if event.saved_ref else "")
            await thoughts.note(f"↶ Back to step {event.to_index}: {changed}{saved}", "user")
        elif isinstance(event, SessionDiffReady):
            self.session_diff = diff = event.diff
            self._view("session-diff", lambda: self.query_one("#session-diff", DiffView).set_diff(diff))
        elif isinstance(event, PolicyChanged):
            self.auto = event.auto
            status.policy = event.label
        elif isinstance(event, Paused):
            await thoughts.end_turn()
            stopped = "Stopped. g lets the model go on · m sends it a message"
            self._view("card", lambda: card.show_status("idle", stopped))
            self.generating, self.paused = False, True
        elif isinstance(event, UndoRefused):
            self._confirm_undo(event)
        elif isinstance(event, Notice):
            await thoughts.note(self._user_text(event.message), "info")
        elif isinstance(event, SessionError):
            self.running = False
            self._last_error = event.message
            await thoughts.note(event.message, "error")
            self.notify(visible(event.message), severity="error", timeout=10)
        elif isinstance(event, SessionFinished):
            await self._finished(event)

    async def _show_tokens(self, event: TokenStreamed) -> None:
        """Thought text goes to the stream as it arrives; the action's raw markup never does."""
        split = self._split
        was_in_action = split.in_action
        shown = split.feed(event.text)
        if shown:
            await self._thoughts.write(shown)
        if split.in_action and (not was_in_action or split.action_name):
            name = split.action_name
            what = f"a {name} action" if name else "its action"
            card = self._card
            self._view("card", lambda: card.show_status(
                "thinking", f"Step {event.index}: the model is writing {what}…"
            ))

    async def _show_proposal(self, event: StepProposed) -> None:
        step = event.step
        await self.query_one(ThoughtStream).end_turn(step.thought)
        if step.notice:
            await self.query_one(ThoughtStream).note(step.notice, "warning")
        summary = self._summary(step.action)
        self.query_one(StepTimeline).set_step(event.index, "pending", summary)
        card = self.query_one(ActionCard)
        self._view("card", lambda: card.show_action(
            f"Step {event.index}", step.action, event.command_shown, event.preview_diff
        ))
        if isinstance(step.action, Bash) and self.session and self.session.config.sandbox:
            subtitle = f"bash · {self.session.config.sandbox}"
            self._view("card", lambda: setattr(card, "border_subtitle", subtitle), replaces=False)
        self.generating, self.pending = False, event

    def _ask_for_decision(self, proposal: StepProposed) -> None:
        """A proposal waits for the user (the driver did not approve it on its own): say so."""
        self.app.bell()
        if time.monotonic() - self._turn_started > NOTIFY_AFTER_SECONDS:
            summary = self._summary(proposal.step.action)
            self.notify(f"Step {proposal.index} waits for your decision: {summary}", timeout=4)

    def _run_on_its_own(self, event: AutoApproved) -> None:
        """The driver approved proposal `event.index` (auto mode or a rule)."""
        if self.pending is not None and self.pending.index == event.index:
            self.pending = None
        self.query_one(StepTimeline).set_step(event.index, "running")
        card = self.query_one(ActionCard)
        self._view("card", lambda: setattr(card, "border_subtitle", f"approved by {event.reason}"),
                   replaces=False)
        self.running = True

    def _show_executed(self, record: StepRecord) -> None:
        self.query_one(StepTimeline).set_step(
            record.index, self._record_status(record), self._record_summary(record)
        )
        action = record.action or record.proposed.action
        self._view("step-diff", lambda: self.query_one("#step-diff", DiffView).set_diff(record.diff))
        card = self.query_one(ActionCard)
        if USER_EDITS_KEY in record.extra:
            kept = f"Your edits are kept as checkpoint {record.index}."
            self._view("card", lambda: card.show_status("done", kept))
            self.executed_steps = len(self._executed_records())
            return
        warnings = record.extra.get(GIT_WARNINGS_KEY)
        if warnings:
            said = f"step {record.index} changed git's own files: " + "; ".join(warnings)
            self.notify(visible(said), severity="warning", timeout=10)
        output = self.query_one(OutputLog)
        self._view("output", lambda: output.show_observation(
            f"Step {record.index} · {self._summary(action, width=200)}",
            self._user_observation(record.observation),
        ))
        if record.extra.get("source") == "user":
            self._view("card", lambda: card.show_status("done", f"Your command ran as step {record.index}."))
        else:
            self._view("card", lambda: setattr(card, "state", "done"), replaces=False)
        self.executed_steps = len(self._executed_records())
        # (a proposal that waited beside the user's command is announced again right after)
        self.pending, self.running = None, False

    async def _finished(self, event: SessionFinished) -> None:
        self.generating, self.pending, self.running = False, None, False
        self.finished = event
        said = event.message == self._last_error  # the error note just above says it already
        ending = f"Session finished ({event.reason})" + ("." if said else f": {event.message}")
        await self.query_one(ThoughtStream).note(ending, "info" if event.reason == "submitted" else "warning")
        card = self.query_one(ActionCard)
        self._view("card", lambda: card.show_status("done", plain(ending)))
        if event.patch:
            self.session_diff = patch = event.patch
            self._view("session-diff", lambda: self.query_one("#session-diff", DiffView).set_diff(patch))
        self.app.bell()
        self.post_message(SessionEnded(event))

    async def run_on_session(self, fn: Callable[[Session], object]) -> object:
        """Run `fn(session)` on the session thread and await its result (errors re-raised)."""
        assert self.driver is not None
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()

        def done(result: object, error: BaseException | None) -> None:
            if error is not None:
                loop.call_soon_threadsafe(future.set_exception, error)
            else:
                loop.call_soon_threadsafe(future.set_result, result)

        self.driver.send(Call(fn, done))
        return await future

    # --- helpers --------------------------------------------------------------------------

    @staticmethod
    def _record_status(record: StepRecord) -> str:
        if record.extra.get("source") == "user":
            return "user"
        if isinstance(record.decision, Reject):
            return "rejected"
        if isinstance(record.action, Submit) and "submit_review" not in record.extra:
            return "submitted"  # (a submit answered with a review message did not finish)
        return "executed"

    def _record_summary(self, record: StepRecord) -> str:
        if USER_EDITS_KEY in record.extra:
            return user_edits_summary(record)
        summary = self._summary(record.action or record.proposed.action)
        return f"{summary} (edited)" if isinstance(record.decision, EditAction) else summary

    def _summary(self, action: Action, width: int = 60) -> str:
        """The action's one line, with the real root where the model wrote `/testbed`."""
        if self.session is not None:
            action = self.session.executor.path_map.action_to_user(action)
        return action_summary(action, width=width)

    def _user_observation(self, observation: Observation | None) -> Observation | None:
        if self.session is None or observation is None:
            return observation
        return self.session.executor.path_map.observation_to_user(observation)

    def _user_text(self, text: str) -> str:
        return text if self.session is None else self.session.executor.path_map.to_user(text)

    def _user_record(self, record: StepRecord) -> StepRecord:
        return record if self.session is None else self.session.executor.path_map.record_to_user(record)

    def _executed_records(self) -> list[StepRecord]:
        if self.session is None:
            return []
        return [r for r in self.session.records if r.checkpoint is not None]

    def _decide(self, decision: Decision) -> None:
        if self.driver is None or self.pending is None:
            return
        index = self.pending.index
        self.query_one(StepTimeline).set_step(index, "running")
        self.running = not isinstance(decision, Reject)
        self.pending = None
        self.driver.send(Decide(decision, index))

    # --- bindings -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        live = self.driver is not None and self.finished is None
        if action in ("approve", "always_allow", "reject", "edit"):
            return live and self.pending is not None and not self.running
        if action == "undo":
            return live and self.executed_steps > 0
        if action == "rewind":
            return live and self._rewind_target() is not None
        if action == "stop":
            return self.loading or (live and (self.generating or self.running))
        if action == "continue":
            return live and self.paused and not self.generating
        if action in ("message", "toggle_auto"):
            return live
        return True

    def _rewind_target(self) -> int | None:
        """The executed step highlighted in the (visible) timeline, if any."""
        timeline = self.query_one(StepTimeline)
        step = timeline.highlighted_step if timeline.display else None
        if step is None or not any(r.index == step for r in self._executed_records()):
            return None
        return step

    def on_step_timeline_step_highlighted(self, event: StepTimeline.StepHighlighted) -> None:
        self.refresh_bindings()

    def action_approve(self) -> None:
        self._decide(Approve())

    @work(exclusive=True, group="modal")
    async def action_always_allow(self) -> None:
        proposal = self.pending
        if proposal is None or self.driver is None:
            return
        action = proposal.step.action
        if isinstance(action, Bash):
            choice = await self.app.push_screen_wait(AllowPrefixScreen(proposal.command_shown))
            if choice is None:
                return
            self.driver.send(Allow(prefix=choice.prefix))
            rule = f"bash commands starting with “{choice.prefix}”"
            if choice.everywhere:
                rule += f" in every repository ({save_allow_rule(choice.prefix)})"
        else:
            kind = "view" if isinstance(action, StrReplaceEditor) and action.command == "view" else action.kind
            self.driver.send(Allow(kind=kind))
            rule = f"every {kind} action"
        self.notify(f"Always allowed: {rule}", timeout=3)
        if self.pending is proposal:
            self._decide(Approve())

    @work(exclusive=True, group="modal")
    async def action_reject(self) -> None:
        proposal = self.pending
        if proposal is None:
            return
        feedback = await self.app.push_screen_wait(RejectScreen(self._summary(proposal.step.action)))
        if feedback is not None and self.pending is proposal:
            self._decide(Reject(feedback))

    @work(exclusive=True, group="modal")
    async def action_edit(self) -> None:
        proposal, session = self.pending, self.session
        if proposal is None or session is None:
            return
        text = edit_text(proposal.step.action, session.config.dialect)
        action = await self.app.push_screen_wait(
            EditScreen(text, session.parse_edit, session.config.dialect)
        )
        if action is not None and self.pending is proposal:
            self._decide(EditAction(action))

    @work(exclusive=True, group="modal")
    async def action_undo(self) -> None:
        if self.driver is None:
            return
        executed = self._executed_records()
        last = executed[-1] if executed else None
        if last is not None and USER_EDITS_KEY in last.extra and not await self.app.push_screen_wait(
            ConfirmScreen(
                "Undo your own edits?",
                f"Step {last.index} holds the edits you made while a proposal waited "
                f"({user_edits_summary(last, width=200)}). Undo puts those files back as they "
                "were before them; your versions are kept in a before-undo ref.",
                confirm="Undo them",
            )
        ):
            return
        self.pending = None
        self.driver.send(Undo(None))

    @work(exclusive=True, group="modal")
    async def _confirm_undo(self, refused: UndoRefused) -> None:
        """Show the files an undo would overwrite; undo anyway only if the user says so."""
        files = "\n".join(f"  {path}" for path in refused.error.paths[:15])
        more = len(refused.error.paths) - 15
        explanation = (
            f"Changed outside the session since step {refused.error.checkpoint}:\n{files}"
            + (f"\n  … and {more} more" if more > 0 else "")
            + "\n\nUndo anyway overwrites them (they are saved in a before-undo ref first)."
        )
        screen = ConfirmScreen("Undo over your changes?", explanation, confirm="Undo anyway")
        if await self.app.push_screen_wait(screen) and self.driver is not None:
            self.driver.send(Undo(refused.to_index, force=True))

    @work(exclusive=True, group="modal")
    async def action_rewind(self) -> None:
        step = self._rewind_target()
        if self.driver is None or step is None:
            return
        later = [r.index for r in self._executed_records() if r.index > step]
        if later and not await self.app.push_screen_wait(ConfirmScreen(
            f"Rewind to step {step}?",
            f"Steps {later[0]}–{later[-1]} are undone: their file changes are reverted and the "
            "model forgets them." if len(later) > 1 else
            f"Step {later[0]} is undone: its file changes are reverted and the model forgets it.",
            confirm="Rewind",
        )):
            return
        self.pending = None
        self.driver.send(Undo(step))

    @work(exclusive=True, group="modal")
    async def action_message(self) -> None:
        if self.driver is None:
            return
        answer = await self.app.push_screen_wait(MessageScreen())
        if answer is None:
            return
        thoughts = self.query_one(ThoughtStream)
        if answer.kind == "command":  # runs beside a pending proposal, which stays pending
            await thoughts.note(f"$ {answer.text}", "user")
            self.running = True
            self.query_one(ActionCard).show_status("running", f"Your command runs: {answer.text}  (esc stops it)")
            self.driver.send(UserCommand(answer.text))
        else:
            await thoughts.note(f"You: {answer.text}", "user")
            self.paused = False
            self.driver.send(UserMessage(answer.text))

    def action_toggle_auto(self) -> None:
        if self.driver is None:
            return
        self.auto = not self.auto
        self.driver.send(SetAuto(self.auto))
        self.notify("Auto mode on: every action runs without asking" if self.auto
                    else "Auto mode off: you approve each action", timeout=3)

    def action_stop(self) -> None:
        """Stop the model's load or generation, or kill the command that runs now."""
        if self.loading:
            self.stop_loading()
            return
        if self.driver is None:
            return
        if self.generating:
            self.driver.stop_generation()
        elif self.running:
            self.driver.interrupt_command()

    def action_continue(self) -> None:
        if self.driver is not None:
            self.paused = False
            self.driver.send(Continue())

    def action_diff(self) -> None:
        tabs = self.query_one("#lower", TabbedContent)
        tabs.active = "tab-session-diff" if tabs.active == "tab-step-diff" else "tab-step-diff"

    def action_toggle_steps(self) -> None:
        self.toggle_class("-show-steps")
        self.refresh_bindings()

    def key_rows(self) -> list[KeyRow]:
        """This screen's keys and the app's, as the live keymap maps them."""
        app = self.app
        bindings = [*self.BINDINGS, *getattr(type(app), "BINDINGS", ()), PALETTE]
        return key_rows(app, bindings, getattr(app, "key_overrides", {}))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.key_rows()))

    def on_step_timeline_step_chosen(self, message: StepTimeline.StepChosen) -> None:
        self._show_step(message.index)

    @work(exclusive=True, group="modal")
    async def _show_step(self, index: int) -> None:
        if self.session is None:
            return
        record = next((r for r in self.session.records if r.index == index), None)
        if record is None:
            return
        can_rewind = self.finished is None and record.checkpoint is not None
        choice = await self.app.push_screen_wait(StepDetailScreen(self._user_record(record), can_rewind))
        if choice == "rewind" and self.driver is not None:
            self.pending = None
            self.driver.send(Undo(index))

    def quit_explanation(self) -> str:
        """What quitting leaves behind, and how to come back or undo it."""
        if self.session is None:
            return "No session has started yet; nothing was changed."
        files = [f.path for f in split_diff(self.session_diff)]
        steps = len(self._executed_records())
        left = (f"The working tree keeps the changes of {steps} executed step(s) in: "
                f"{', '.join(files)}." if files else "The working tree has no changes from this session.")
        if not self.resumable:
            return (f"{left}\nThis is a temporary demo repository: it is deleted when navtui exits "
                    "(navtui demo --keep keeps it).")
        repo = shlex.quote(self.repo_label) if self.repo_label else "REPO"
        return (
            f"{left}\nThe session {self.session.id} is saved; resume it with\n"
            f"    navtui --resume {self.session.id} {repo}\n"
            "To drop its changes, resume and rewind to step 0 (u / w), or discard at the finish screen."
        )

    def quit_session(self, *, ask: bool) -> None:
        """Quit as q does; `ask=False` (ctrl+q with nothing running) without the question."""
        if ask:
            self.action_quit_session()
        else:
            self._quit_now()

    def action_interrupt(self) -> None:
        """ctrl+c (bound by the app, so dialogs over this screen have it too): stop what runs, as
        esc does; with nothing running, a second press within INTERRUPT_AGAIN seconds asks to
        quit."""
        if self.check_action("stop", ()):
            self.action_stop()
            self._interrupted_at = time.monotonic()
            return
        if time.monotonic() - self._interrupted_at <= INTERRUPT_AGAIN:
            self._interrupted_at = -INTERRUPT_AGAIN
            self.action_quit_session()
            return
        self._interrupted_at = time.monotonic()
        self.notify("Nothing is running. Press ctrl+c again to quit.", timeout=INTERRUPT_AGAIN)

    @work(exclusive=True, group="modal")
    async def action_quit_session(self) -> None:
        if not (self.load_failed or self.load_stopped) and not await self.app.push_screen_wait(
            QuitScreen(self.quit_explanation())
        ):
            return
        self._quit_now()

    def _quit_now(self) -> None:
        if self.driver is not None and self.pending is not None and self.finished is None:
            index, self.pending = self.pending.index, None
            self.driver.send(Decide(Quit(), index))
            return
        self.post_message(SessionEnded(SessionFinished("quit", "quit by the user")))


class SessionEnded(Message):
    """The session finished (any reason); the app decides what comes next."""

    def __init__(self, finished: SessionFinished) -> None:
        super().__init__()
        self.finished = finished
