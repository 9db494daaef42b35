"""How a session on the main screen ends: the finish (and going on after it), and quitting.
A mixin of `MainScreen`; the app hears of the end through `SessionEnded`."""

from __future__ import annotations

import shlex
import time

from textual import work
from textual.message import Message

from agent_core.driver import Decide
from agent_core.events import SessionFinished
from agent_core.finish import FinishReason
from agent_core.steps import Quit
from app.screens.quit import QuitScreen
from widgets.action_card import ActionCard
from widgets.diff_view import split_diff
from widgets.plain_text import plain
from widgets.thought_stream import ThoughtStream


# ctrl+c with nothing running asks to quit when pressed again within this many seconds.
INTERRUPT_AGAIN = 2.0


class SessionEnded(Message):
    """The session finished (any reason); the app decides what comes next."""

    def __init__(self, finished: SessionFinished) -> None:
        super().__init__()
        self.finished = finished


class SessionEnding:
    """The finish, going on after it, and quitting (q, ctrl+q, ctrl+c twice)."""

    async def _on_finished(self, event: SessionFinished) -> None:
        """The session finished: say why, show its patch, and let the app decide what is next."""
        self.generating, self.pending, self.running = False, None, False
        self.finished = event
        said = event.message == self._last_error  # the error note just above says it already
        ending = f"Session finished ({event.reason})" + ("." if said else f": {event.message}")
        tone = "info" if event.reason == FinishReason.SUBMITTED else "warning"
        await self.query_one(ThoughtStream).note(ending, tone)
        card = self.query_one(ActionCard)
        self._batch.view("card", lambda: card.show_status("done", plain(ending)))
        if event.patch:
            self.session_diff = patch = event.patch
            self._batch.view("session-diff", lambda: self._diffs.set_diff(patch, "session"))
        self.app.bell()
        self.post_message(SessionEnded(event))

    async def continue_session(self, text: str) -> None:
        """After the finish: the session goes on, `text` being the model's next turn."""
        await self.query_one(ThoughtStream).note(f"You: {text}", "user")
        await self.run_on_session(lambda session: session.continue_with(text))
        self.finished = None
        self.paused = False

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
            f"    navtui --resume {shlex.quote(self.session.id)} {repo}\n"
            "To drop its changes, resume and rewind to step 0 (u / w), or discard at the finish screen."
        )

    def session_diff_in_view(self) -> None:
        """Tell the session thread whether the session diff is seen: its tab, or the quit
        question's list of changed files (one no one sees is computed less often)."""
        if self.driver is not None:
            self.driver.show_session_diff(self.session_diff_tab_shown or self.quit_dialog is not None)

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
        if not (self.load_failed or self.load_stopped) and not await self._ask_to_quit():
            return
        self._quit_now()

    async def _ask_to_quit(self) -> bool:
        """The quit question, its list of changed files kept current while it is open (auto mode
        goes on behind it; the session diff is computed at the pace of one on screen)."""
        self.quit_dialog = QuitScreen(self.quit_explanation())
        self.session_diff_in_view()
        try:
            return await self.app.push_screen_wait(self.quit_dialog)
        finally:
            self.quit_dialog = None
            self.session_diff_in_view()

    def _quit_now(self) -> None:
        if self.driver is not None and self.pending is not None and self.finished is None:
            index, self.pending = self.pending.index, None
            self.driver.send(Decide(Quit(), index))
            return
        self.post_message(SessionEnded(SessionFinished(FinishReason.QUIT, "quit by the user")))
