"""The main screen: watch the model think, decide on each action, see outputs and diffs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from agent_core.actions import Action
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
    Waiting,
)
from agent_core.driver import (
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
    UndoRefused,
)
from agent_core.sanitize import visible
from agent_core.steps import GIT_WARNINGS_KEY, RULE, Decision, Origin, Reject, StepRecord
from app.config import AllowRules
from app.keys import PALETTE, KeyRow, key_rows
from app.screens.copy_keys import CopyKeys
from app.screens.ending import INTERRUPT_AGAIN, SessionEnding
from app.screens.help import HelpScreen
from app.screens.hunk_review import HUNK_ACTIONS, HUNK_BINDINGS, HunkReviewKeys
from app.screens.phase import Phase
from app.screens.plan_key import PlanKey
from app.screens.render_batch import FooterRefresh, RenderBatch
from app.screens.rule_suggestions import RuleSuggestionKeys
from app.screens.step_dialogs import StepDialogs
from app.textual_patches import ArrangedOnce
from app.stream_split import StreamSplit
from widgets.action_card import ActionCard, action_summary
from widgets.diff_view import DiffView
from widgets.issue_pane import IssuePane
from widgets.lower_pane import OUTPUT, SESSION_DIFF, STEP_DIFF, LowerPane
from widgets.output_log import OutputLog
from widgets.plain_text import plain
from widgets.status_bar import StatusBar
from widgets.step_timeline import StepTimeline, step_line, step_status
from widgets.thought_stream import ThoughtStream

if TYPE_CHECKING:
    from agent_core.executor.paths import PathMap
    from agent_core.session import Session
    from app.screens.quit import QuitScreen

# A proposal that took longer than this to generate also gets a toast (the user looked away).
NOTIFY_AFTER_SECONDS = 5.0
# Auto mode: session events are rendered at most this often (seconds), all that arrived together;
# a step that changes nothing takes ~5 ms headless, one that runs a command ~40 ms on a large
# repository, so several steps share one render (five a second: cards and outputs flipping
# faster than that are not read; streamed text is never held back).
AUTO_FRAME = 0.2
# The screen state the Footer's keys depend on.
STATE = ("pending", "generating", "running", "finished", "paused", "executed_steps")


class SessionWake(Message):
    """Session events are waiting in the screen's inbox."""


class MainScreen(HunkReviewKeys, StepDialogs, PlanKey, SessionEnding, CopyKeys,
                 RuleSuggestionKeys, ArrangedOnce):
    CSS_PATH = "main.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("a", "approve", "Approve", id="navtui.approve", tooltip="Run the proposed action"),
        Binding("A", "always_allow", "Always", id="navtui.always_allow",
                tooltip="Approve; from now on this kind or bash prefix"),
        Binding("r", "reject", "Reject", id="navtui.reject", tooltip="Do not run it; tell the model why"),
        Binding("e", "edit", "Edit", id="navtui.edit", tooltip="Change the action before it runs"),
        *HUNK_BINDINGS,  # ] [ k x E: per-hunk review of an edit (app/screens/hunk_review.py)
        Binding("u", "undo", "Undo", id="navtui.undo", tooltip="Undo the last step: files and conversation"),
        Binding("w", "rewind", "Rewind", id="navtui.rewind",
                tooltip="Go back to the step selected in the timeline"),
        Binding("m", "message", "Msg", id="navtui.message",
                tooltip="Message the model, or run !command yourself"),
        Binding("t", "toggle_auto", "Auto", id="navtui.auto",
                tooltip="Auto mode: approve all, within the limits"),
        Binding("p", "toggle_plan", "Plan", id="navtui.plan", show=False,
                tooltip="Plan mode: the repository read-only; the model reads and runs tests"),
        Binding("escape", "stop", "Stop", id="navtui.stop",
                tooltip="Stop the generation or the running command"),
        Binding("g", "continue", "Go on", id="navtui.continue",
                tooltip="Let the model propose again after a stop"),
        Binding("d", "diff", "Diff", id="navtui.diff", show=False,
                tooltip="Output, step diff, session diff, in turn"),
        Binding("s", "toggle_steps", "Steps", id="navtui.steps", show=False,
                tooltip="Focus the step timeline (shown if hidden); again: hide it"),
        Binding("c", "copy", "Copy", id="navtui.copy", show=False,
                tooltip="Copy the focused step, command, diff or output"),
        Binding("L", "rule_suggestions", "Rules", id="navtui.suggest_rules", show=False,
                tooltip="Rules your decisions suggest: keep or decline"),
        Binding("question_mark", "help", "Help", id="navtui.help", tooltip="All keys, as mapped now"),
        Binding("q", "quit_session", "Quit", id="navtui.quit",
                tooltip="Quit; the session is saved and resumable"),
    ]

    # Screen state (the names in STATE): the Footer and the command palette follow it (watched
    # in `__init__`), and so does the phase, computed from it: the header's state word and the
    # card's colour (`watch_phase`); nothing else refreshes them. (`var`s: a change repaints
    # nothing by itself, where a `reactive` would repaint the whole screen.)
    pending: reactive[StepProposed | None] = var(None, init=False)
    generating: reactive[bool] = var(False, init=False)
    running: reactive[bool] = var(False, init=False)
    finished: reactive[SessionFinished | None] = var(None, init=False)
    paused: reactive[bool] = var(False, init=False)
    executed_steps: reactive[int] = var(0, init=False)
    phase: reactive[Phase | None] = var(None, init=False)

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
        self.quit_dialog: QuitScreen | None = None  # open: its file list follows the session diff
        self.session_diff_tab_shown = False  # (as the lower pane last said)
        self._initial = session
        self._mounted = False
        self._shut_down = False
        self._loading_message = loading_message
        self._turn_started = 0.0
        self._turn_index = 0
        self._split = StreamSplit("auto")
        self._announced: StepProposed | None = None  # the last proposal the user was told about
        self._last_error = ""
        self._batch = RenderBatch(self, AUTO_FRAME, lambda: self.post_message(SessionWake()),
                                  lambda: self.auto)
        self._footer = FooterRefresh(self, super().refresh_bindings, self._bindings_state)
        for name in STATE:
            self.watch(self, name, self._footer.if_changed, init=False)
        self._handlers: dict[type, Callable[[Any], Coroutine[Any, Any, None] | None]] = {
            SessionStarted: self._on_started,
            TurnStarted: self._on_turn,
            TokenStreamed: self._on_tokens,
            UsageReported: self._on_usage,
            FormatError: self._on_format_error,
            StepProposed: self._on_proposed,
            AutoApproved: self._on_auto_approved,
            StepExecuted: self._on_executed,
            StepRejected: self._on_rejected,
            StepUndone: self._on_undone,
            SessionDiffReady: self._on_session_diff,
            PolicyChanged: self._on_policy,
            Paused: self._on_paused,
            UndoRefused: self._on_undo_refused,
            Notice: self._on_notice,
            Waiting: lambda e: self._status.show_wait(e.reason, e.waited_s, e.next_try_s),
            SessionError: self._on_error,
            SessionFinished: self._on_finished,
        }
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
                yield LowerPane(id="lower")
        # (ctrl+p is in the help; at 80 columns the footer keeps its room for q and ?)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        # The widgets every session event touches, looked up once (not per streamed token).
        self._status, self._card = self.query_one(StatusBar), self.query_one(ActionCard)
        self._thoughts, self._timeline = self.query_one(ThoughtStream), self.query_one(StepTimeline)
        self._diffs, self._lower = self.query_one(DiffView), self.query_one(LowerPane)
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
        self.driver = SessionDriver(session, self.inbox, auto=self.auto,
                                    approvals=self.app_rules.approvals())  # the config's [rules]
        self.session_diff_in_view()
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
        self.show_mode()
        status.tooltip = visible(session.executor.where) or None  # what the sandbox shows
        if session.executor.launcher.notice and not session.records:
            self.call_later(self.query_one(ThoughtStream).note, session.executor.launcher.notice,
                            "warning")
        if session.issue != self.issue:
            self.issue = session.issue
            self.query_one(IssuePane).set_issue(session.issue)
        timeline = self.query_one(StepTimeline)
        earlier = [self._user_record(record) for record in session.records]
        for record in earlier:
            timeline.show_record(record)
        self.executed_steps = len(self._executed_records())
        if session.records:
            self.call_later(self._show_history, earlier)
        self.query_one(ActionCard).show_status("thinking", "Starting the session…")
        self._drive()
        self.refresh_bindings()
        if session.finished is not None:  # resumed after its submit: the finish screen offers more
            self.call_later(self._on_finished, session.finished)

    async def _show_history(self, shown: list[StepRecord]) -> None:
        """A resumed session: what happened before (its records in the user's paths), one line
        per step, and its last output."""
        thoughts = self.query_one(ThoughtStream)
        lines = [f"{r.index}. {step_line(r)} ({step_status(r)})" for r in shown]
        await thoughts.note("Resumed. Earlier steps:\n" + "\n".join(lines), "info")
        executed = [r for r in shown if r.checkpoint is not None]
        if executed:
            self.query_one(OutputLog).show_record(executed[-1])
            self._diffs.show_record(executed[-1], "step")

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
        """Refresh the Footer (and palette) at the next frame, however many ask."""
        self._footer.always()

    def _bindings_state(self) -> tuple[bool | None, ...]:
        """Which of the screen's keys are enabled now (what the Footer shows)."""
        return tuple(self.check_action(binding.action, ()) for binding in self.BINDINGS)

    def compute_phase(self) -> Phase:
        # (read `self.phase` nowhere: Textual runs `watch_phase` on every read of a computed one)
        return Phase.of(finished=self.finished, pending=self.pending, running=self.running,
                        generating=self.generating, paused=self.paused)

    def watch_phase(self, phase: Phase) -> None:
        self._show_phase(phase)

    def _show_phase(self, phase: Phase) -> None:
        """The header's state word and the card's colour, both from the screen state alone."""
        if not self._mounted or self.session is None:
            return
        self._status.state = phase.state
        card = self._card
        # (a colour change restyles the card: in auto mode, once per drain)
        self._batch.view("card-colour", lambda: setattr(card, "state", phase.colour))

    # --- session events -------------------------------------------------------------------

    async def on_session_wake(self, message: SessionWake) -> None:
        if self.inbox is None:
            return
        # Text streamed into the turn being written is never held back: when the drain is held
        # to the frame, the events up to the last of it are rendered now.
        held = self._batch.hold()
        self._batch.draining = True
        if self.auto:  # turns that begin and end within the drain are mounted folded
            self._thoughts.hold()
        # One layout for the whole drain: mounting its turns awaits, and a frame in between
        # would lay out the screen before the card and the output show the drain's last step.
        with self.app.batch_update():
            try:
                for event in self.inbox.drain(live_text=held):
                    if self._shut_down:
                        return
                    await self.handle_event(event)
            finally:
                self._batch.draining = False
                await self._thoughts.release()
                self._show_views()
        proposal, announced = self.pending, self._announced
        if proposal is not None and proposal is not announced:
            self._announced = proposal
            if announced is None or proposal.step is not announced.step:
                self._ask_for_decision(proposal)

    def _show_views(self) -> None:
        views = self._batch.take_views()
        if self._shut_down or not views:
            return
        colour = views.pop("card-colour", None)
        for shows in views.values():
            for show in shows:
                show()
        if colour is not None:  # last: the card's colour follows the screen state, as it did
            colour[0]()
        elif "card" in views:
            self._show_phase(self.compute_phase())

    async def handle_event(self, event: Event | DriverEvent) -> None:
        """Render one session or driver event (with its handler in `self._handlers`)."""
        handler = self._handlers.get(type(event))
        shown = handler(event) if handler is not None else None
        if shown is not None:  # (the handlers that write to the thought stream are async)
            await shown

    def _on_started(self, event: SessionStarted) -> None:
        self._status.state = "started"

    async def _on_turn(self, event: TurnStarted) -> None:
        self._turn_started, self._turn_index = time.monotonic(), event.index
        self._status.turn_started(self._turn_started)
        self._split = StreamSplit(self.session.config.dialect if self.session else "auto")
        self._status.step = event.index
        card, thinking = self._card, f"Step {event.index}: the model is thinking…"
        self._batch.view("card", lambda: card.show_status("thinking", thinking))
        self.pending, self.running, self.paused, self.generating = None, False, False, True
        await self._thoughts.begin_turn(f"Step {event.index}")

    def _on_usage(self, event: UsageReported) -> None:
        self._status.show_usage(event)

    async def _on_format_error(self, event: FormatError) -> None:
        self.generating = False
        await self._thoughts.end_turn()
        await self._thoughts.note(
            f"Step {event.index}: the reply could not be parsed ({event.consecutive} in a row); "
            f"the model is told why:\n{event.message}",
            "warning",
        )

    async def _on_rejected(self, event: StepRejected) -> None:
        self.running = False
        record = event.record
        self._timeline.show_record(self._user_record(record))
        feedback = record.decision.feedback if isinstance(record.decision, Reject) else ""
        who = "A deny rule" if getattr(record.decision, "decided_by", "") == RULE else "You"
        await self._thoughts.note(
            f"{who} rejected step {record.index}" + (f": {feedback}" if feedback else "."), "user"
        )

    async def _on_undone(self, event: StepUndone) -> None:
        self.pending, self.running = None, False
        self._timeline.drop_after(event.to_index)
        kept = [r for r in self._executed_records() if r.index <= event.to_index]
        self.executed_steps = len(kept)
        step_diff = kept[-1].diff if kept else ""
        self._batch.view("step-diff", lambda: self._diffs.set_diff(step_diff, "step"))
        changed = ", ".join(event.changed_paths) or "no file changed"
        saved = (f"\nWhat was there before is kept: git restore --source={event.saved_ref}"
                 " -- PATH brings a file back." if event.saved_ref else "")
        await self._thoughts.note(f"↶ Back to step {event.to_index}: {changed}{saved}", "user")

    def _on_session_diff(self, event: SessionDiffReady) -> None:
        self.session_diff = diff = event.diff
        self._batch.view("session-diff", lambda: self._diffs.set_diff(diff, "session"))
        if self.quit_dialog is not None:
            self.quit_dialog.explain(self.quit_explanation())

    def _on_policy(self, event: PolicyChanged) -> None:
        self.auto = event.auto
        self._status.policy = event.label

    async def _on_paused(self, event: Paused) -> None:
        await self._thoughts.end_turn()
        self._status.turn_ended()
        card, stopped = self._card, "Stopped. g lets the model go on · m sends it a message"
        self._batch.view("card", lambda: card.show_status("idle", stopped))
        self.generating, self.paused = False, True

    def _on_undo_refused(self, event: UndoRefused) -> None:
        self._confirm_undo(event)  # (a dialog: the drain goes on)

    async def _on_notice(self, event: Notice) -> None:
        await self._thoughts.note(self._user_text(event.message), "info")

    async def _on_error(self, event: SessionError) -> None:
        self.running = False
        self._last_error = event.message
        await self._thoughts.note(event.message, "error")
        self.notify(visible(event.message), severity="error", timeout=10)

    async def _on_tokens(self, event: TokenStreamed) -> None:
        """Thought text goes to the stream as it arrives; the action's raw markup never does."""
        self._status.waiting = ""  # the server sends again
        self._status.streamed(event.text, time.monotonic(), getattr(self.session.backend, "generates", True))
        split = self._split
        was_in_action = split.in_action
        shown = split.feed(event.text)
        if shown:
            await self._thoughts.write(shown)
        if split.in_action and (not was_in_action or split.action_name):
            name = split.action_name
            what = f"a {name} action" if name else "its action"
            card = self._card
            self._batch.view("card", lambda: card.show_status(
                "thinking", f"Step {event.index}: the model is writing {what}…"
            ))

    async def _on_proposed(self, event: StepProposed) -> None:
        step = event.step
        await self.query_one(ThoughtStream).end_turn(step.thought)
        if step.notice:
            await self.query_one(ThoughtStream).note(step.notice, "warning")
        summary = self._summary(step.action)
        self.query_one(StepTimeline).set_step(event.index, "pending", summary)
        card = self.query_one(ActionCard)
        self._batch.view("card", lambda: card.show_action(
            f"Step {event.index}", step.action, event.command_shown, event.preview_diff
        ))
        if subtitle := self.card_subtitle(step.action):  # where it runs; plan mode's refusal
            self._batch.view("card", lambda: setattr(card, "border_subtitle", subtitle), replaces=False)
        self.generating, self.pending = False, event

    def _ask_for_decision(self, proposal: StepProposed) -> None:
        """A proposal waits for the user (the driver did not approve it on its own): say so."""
        self.app.bell()
        if time.monotonic() - self._turn_started > NOTIFY_AFTER_SECONDS:
            summary = self._summary(proposal.step.action)
            self.notify(f"Step {proposal.index} waits for your decision: {summary}", timeout=4)

    def _on_auto_approved(self, event: AutoApproved) -> None:
        """The driver approved proposal `event.index` (auto mode or a rule), or rejected it."""
        if self.pending is not None and self.pending.index == event.index:
            self.pending = None
        self.query_one(StepTimeline).set_step(event.index, "rejected" if event.rejected else "running")
        card, said = self.query_one(ActionCard), "rejected" if event.rejected else "approved"
        self._batch.view("card", lambda: setattr(card, "border_subtitle", f"{said} by {event.reason}"),
                   replaces=False)
        self.running = not event.rejected

    def _on_executed(self, event: StepExecuted) -> None:
        record = self._user_record(event.record)
        self._timeline.show_record(record)
        diffs, card = self._diffs, self._card
        self._batch.view("step-diff", lambda: diffs.show_record(record, "step"))
        if record.user_edits is not None:  # (no command ran: no output, no warnings)
            self._batch.view("card", lambda: card.show_record(record))
            self.executed_steps = len(self._executed_records())
            return
        warnings = record.extra.get(GIT_WARNINGS_KEY)
        if warnings:
            said = f"step {record.index} changed git's own files: " + "; ".join(warnings)
            self.notify(visible(said), severity="warning", timeout=10)
        output = self.query_one(OutputLog)
        self._batch.view("output", lambda: output.show_record(record))
        # (the user's own step replaces what the card showed; the model's keeps its action there)
        self._batch.view("card", lambda: card.show_record(record), replaces=record.origin is Origin.USER)
        self.executed_steps = len(self._executed_records())
        # (a proposal that waited beside the user's command is announced again right after)
        self.pending, self.running = None, False

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

    @property
    def _paths(self) -> PathMap | None:
        """How the model's paths meet the user's (none before the session)."""
        return None if self.session is None else self.session.executor.path_map

    def _summary(self, action: Action, width: int = 60) -> str:
        """The action's one line, with the user's paths where the model's differ."""
        paths = self._paths
        return action_summary(action if paths is None else paths.action_to_user(action), width=width)

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
        if action in ("message", "toggle_auto", "toggle_plan"):
            return live
        return self.hunk_keys_apply(action) if action in HUNK_ACTIONS else True

    def on_step_timeline_step_highlighted(self, event: StepTimeline.StepHighlighted) -> None:
        self.refresh_bindings()

    def on_lower_pane_shown(self, event: LowerPane.Shown) -> None:
        self.session_diff_tab_shown = event.tab == SESSION_DIFF
        self.session_diff_in_view()

    def action_approve(self) -> None:
        if (decision := self.reviewed_decision()) is not None:  # (the kept hunks, if reviewed)
            self._decide(decision)

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

    def action_diff(self) -> None:  # output, step diff, session diff, output, ...
        lower = self._lower
        lower.active = {OUTPUT: STEP_DIFF, STEP_DIFF: SESSION_DIFF}.get(lower.active, OUTPUT)

    def action_toggle_steps(self) -> None:
        """Focus the timeline (its arrows choose `w`'s step), shown if hidden; focused: hide it."""
        timeline, shown = self._timeline, self._timeline.display
        if not shown or timeline.has_focus:
            self.toggle_class("-show-steps")  # (a timeline takes the focus once it shows)
        self.call_after_refresh(self.set_focus, None if shown and timeline.has_focus else timeline)
        self.refresh_bindings()

    def key_rows(self) -> list[KeyRow]:
        """This screen's keys and the app's, as the live keymap maps them."""
        app = self.app
        bindings = [*self.BINDINGS, *getattr(type(app), "BINDINGS", ()), PALETTE]
        return key_rows(app, bindings, getattr(app, "key_overrides", {}))

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.key_rows()))
