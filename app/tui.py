"""The Textual app: a thin front end over a headless `Session`.

`run_tui` takes either a ready Session or a factory that builds one from the issue text (loading
a model can take a while: the factory runs in a worker thread after the first frame is drawn).
"""

from __future__ import annotations

import asyncio
import gc
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerState

from agent_core.events import SessionFinished
from agent_core.finish import FinishReason
from agent_core.git import BranchError, UnsafeRestore, branch_for, commit_patch_to_branch
from app.commands import resume_line
from app.config import AllowRules, Config
from app.finish import FinishError, save_patch
from app.frame_rate import use_navtui_frame_rate
from app.screens.confirm import OverwriteScreen
from app.screens.finish import FinishChoice, FinishScreen
from app.screens.ending import SessionEnded
from app.screens.main import MainScreen
from app.screens.message import MessageScreen
from app.screens.start import StartChoice, StartScreen
from widgets.issue_pane import issue_title
from widgets.plain_text import plain

if TYPE_CHECKING:
    from textual.timer import Timer

    from agent_core.backends.base import LoadProgress
    from agent_core.session import Session

SessionFactory = Callable[[str], "Session"]
ResumeFactory = Callable[[str], "Session"]

DARK = Theme(
    name="navtui-dark", primary="#7aa2c8", secondary="#8fa9a1", accent="#d9a766",
    warning="#d9a766", error="#d27a7a", success="#8fbf8f", foreground="#d8dee9",
    background="#1b1f24", surface="#22272e", panel="#2b323b", dark=True,
)
LIGHT = Theme(
    name="navtui-light", primary="#3d6a99", secondary="#5a7f74", accent="#a8691a",
    warning="#a8691a", error="#b44c4c", success="#3f7f4f", foreground="#2b2f36",
    background="#f7f5f0", surface="#efece5", panel="#e3dfd5", dark=False,
)

CONTINUE_HINT = ("What should the model do now? It goes on from here and reads this next; "
                 "the finish screen comes back when it submits again.")

# Keys the command palette does not repeat (ctrl+c is esc's twin; the palette cannot open itself).
PALETTE_SKIPS = ("interrupt", "command_palette")


def _default_signals_in_child() -> None:
    """Forked children (the session's bash, spawned with pexpect) must not run the app's
    SIGCONT/SIGTSTP/SIGWINCH handlers: they need the app's event loop, which a child lacks, and
    giving up the pty (TIOCNOTTY) sends the child a SIGCONT."""
    for number in (signal.SIGCONT, signal.SIGTSTP, signal.SIGWINCH):
        signal.signal(number, signal.SIG_DFL)


os.register_at_fork(after_in_child=_default_signals_in_child)


class LoadProgressed(Message):
    """The model load moved on (posted from the loading thread)."""

    def __init__(self, progress: LoadProgress) -> None:
        super().__init__()
        self.progress = progress


class LoadRelay:
    """The `progress` callback for loading a model in the app's factory: hands each phase to the
    app once it runs (`NavApp(load_relay=...)`)."""

    def __init__(self) -> None:
        self.app: App | None = None

    def __call__(self, progress: LoadProgress) -> None:
        if self.app is not None:
            self.app.post_message(LoadProgressed(progress))


class NavApp(App[int]):
    """navtui's app. `source` is a Session or a `SessionFactory` (issue -> Session)."""

    TITLE = "navtui"
    BINDINGS = [
        Binding("T", "toggle_dark", "Light/dark", id="navtui.theme", show=False,
                tooltip="Switch between the light and the dark theme"),
        Binding("ctrl+q", "quit", "Quit", id="navtui.quit_app", show=False, priority=True,
                tooltip="Quit at once (asks while something runs)"),
        # Priority, so a dialog over the session has it too; in a text field it copies instead.
        Binding("ctrl+c", "interrupt", "Stop", id="navtui.interrupt", show=False, priority=True,
                tooltip="Stop as esc; twice, nothing running: quit"),
    ]

    def __init__(
        self,
        source: Session | SessionFactory,
        *,
        repo: str | Path | None = None,
        issue: str | None = None,
        resume: ResumeFactory | None = None,
        auto: bool = False,
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        allow_rules: AllowRules | None = None,
        clipboard: str = "auto",
        load_relay: LoadRelay | None = None,
        backend_info: dict[str, str] | None = None,
        resumable: bool = True,
    ) -> None:
        super().__init__()
        self.source = source
        self.resumable = resumable
        self.repo = Path(repo) if repo is not None else None
        self.initial_issue = issue
        self.resume = resume
        self.auto = auto
        self.register_theme(DARK)
        self.register_theme(LIGHT)
        self.theme = theme or "navtui-dark"
        self.key_overrides = dict(keymap or {})
        self.set_keymap(self.key_overrides)
        # No animations (the tabs' sliding underline is the only one left): each is ~20 frames
        # competing with a streaming turn for the UI thread. TEXTUAL_ANIMATIONS still decides.
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            self.animation_level = "none"
        use_navtui_frame_rate()
        self.allow_rules = allow_rules or AllowRules()
        self.clipboard_method = clipboard  # `c`'s way out: auto, osc52 or file (app.clipboard)
        if load_relay is not None:
            load_relay.app = self
        self.backend_info = backend_info or {}
        self._load_started = 0.0
        self._load_progress: LoadProgress | None = None
        self._load_timer: Timer | None = None
        self.main: MainScreen | None = None
        self.result_message = ""
        self.load_error = ""  # why the session could not be built (the model did not load)

    @property
    def repo_label(self) -> str:
        return str(self.repo) if self.repo is not None else ""

    def on_mount(self) -> None:
        # Everything loaded so far lives as long as the app: keep it out of the collector's
        # full passes, which otherwise pause the UI for tens of ms while a long turn streams.
        self.call_after_refresh(gc.freeze)
        if hasattr(self.source, "subscribe"):
            session = self.source
            self._show_main(self._main_screen(session.issue, session=session))
        elif self.initial_issue:
            self._open_issue(self.initial_issue)
        else:
            loader = self._recent_sessions if self.repo is not None and self.resume is not None else None
            self.push_screen(StartScreen(self.repo_label or "this repository", loader), self._on_start)

    def _main_screen(self, issue: str, **kwargs) -> MainScreen:
        return MainScreen(issue, repo_label=self.repo_label, auto=self.auto, resumable=self.resumable,
                          **kwargs)

    def _recent_sessions(self) -> list:
        """The 20 newest sessions logged for the repo, newest first (runs in a worker thread)."""
        from agent_core.trajectory import list_sessions

        assert self.repo is not None
        try:
            return list(reversed(list_sessions(self.repo)[-20:]))
        except OSError:
            return []

    def _on_start(self, choice: StartChoice | None) -> None:
        if choice is None:
            self.exit(return_code=FinishReason.QUIT.exit_code)
        elif choice.kind == "resume" and self.resume is not None:
            resume = self.resume
            self._show_main(self._main_screen("", loading_message=f"Resuming session {choice.value}…"))
            self._build(lambda: resume(choice.value))
        else:
            self._open_issue(choice.value)

    def _open_issue(self, issue: str) -> None:
        factory = self.source
        assert callable(factory)
        self._show_main(self._main_screen(issue))
        self._build(lambda: factory(issue))

    def _show_main(self, screen: MainScreen) -> None:
        self.main = screen
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def _build(self, make: Callable[[], Session]) -> None:
        self._load_started, self._load_progress = time.monotonic(), None
        self._load_timer = self.set_interval(1.0, self._show_loading)
        self.call_after_refresh(self._show_loading)
        self._load(make)

    @work(thread=True, exit_on_error=False, group="load", name="load")
    def _load(self, make: Callable[[], Session]) -> None:
        session = make()
        self.call_from_thread(self._attach_session, session)

    def on_load_progressed(self, message: LoadProgressed) -> None:
        self._load_progress = message.progress
        self._show_loading()

    def _show_loading(self) -> None:
        """The load's phase and the seconds since it began, on the card and in the header."""
        if self.main is None:
            return
        progress, elapsed = self._load_progress, time.monotonic() - self._load_started
        detail = f"{elapsed:.0f} s"
        if progress is not None:
            count = f" {progress.done}/{progress.total}" if progress.total else ""
            detail = f"{progress.phase}{count} · {detail}"
        info = self.backend_info
        self.main.show_loading(detail, info.get("preset") or info.get("model") or "model",
                               info.get("dialect", "auto"))

    def _stop_loading_clock(self) -> None:
        if self._load_timer is not None:
            self._load_timer.stop()
            self._load_timer = None

    def _attach_session(self, session: Session) -> None:
        self._stop_loading_clock()
        if self.main is None or not self.main.is_attached or self.main.load_stopped:
            session.close()
            return
        self.main.attach(session)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "load" and event.state == WorkerState.ERROR and self.main:
            self._stop_loading_clock()
            self.load_error = message = str(event.worker.error)
            self.main.show_load_error(message)
            self.notify(message, title="Could not start the session", severity="error", timeout=30)

    # --- the end ----------------------------------------------------------------------------

    def on_session_ended(self, message: SessionEnded) -> None:
        finished = message.finished
        if finished.reason == FinishReason.QUIT:
            started = self.main is not None and self.main.session is not None
            if self.load_error and not started:
                self._leave(FinishReason.ERROR.exit_code, f"navtui: could not start: {self.load_error}")
            elif not started:
                self._leave(FinishReason.QUIT.exit_code,
                            "navtui: quit before a session started; nothing was changed.")
            elif self.main is not None and self.main.crashed:
                self._leave(FinishReason.ERROR.exit_code, f"navtui: the session stopped: {self.main.crashed}")
            elif self.resumable:
                self._leave(FinishReason.QUIT.exit_code, "navtui: quit.")
            else:
                self._leave(FinishReason.QUIT.exit_code,
                            "navtui: quit; nothing is kept (a temporary repository).")
        else:
            patch = finished.patch
            if not finished.patch_complete and self.main is not None and self.main.session:
                patch = self.main.session.full_patch()  # the logged one names huge files
            self._finish(finished.reason, finished.message, patch)

    @work(exclusive=True, group="finish")
    async def _finish(self, reason: FinishReason, message: str, patch: str) -> None:
        main = self.main
        assert main is not None
        session = main.session
        issue = session.issue if session is not None else ""
        if reason == FinishReason.SUBMITTED:
            headline, detail = "The model submitted a fix.", ""
        else:
            headline, detail = f"The session stopped ({reason}).", message
        if session is not None and session.started:
            left_out = (await asyncio.to_thread(session.patch_scope)).notices
            detail = "\n".join(filter(None, [detail, *left_out]))
        branch = branch_for(self.repo, issue_title(issue)) if self.repo is not None else "navtui/fix"
        default_patch = f"navtui-{session.id if session is not None else 'session'}.patch"
        while True:
            choice: FinishChoice = await self.push_screen_wait(
                FinishScreen(headline, detail, patch, branch, default_patch)
            )
            if choice.kind == "continue":
                if await self._continue(main):
                    return
                continue
            try:
                outcome = await self._apply(choice, patch, issue)
            except (FinishError, BranchError, OSError) as error:
                self.notify(str(error), title="Could not do that", severity="error", timeout=15)
                continue
            if reason == FinishReason.ERROR:  # said again after the app closes, with its fix
                outcome = f"navtui: the session stopped: {message}\n{outcome}"
            self._leave(FinishReason(reason).exit_code, outcome)
            return

    async def _continue(self, main: MainScreen) -> bool:
        """"Continue with a message": ask for it; the session goes on (True) or, asked nothing,
        the finish screen comes back (False)."""
        answer = await self.push_screen_wait(MessageScreen(hint=CONTINUE_HINT))
        if answer is None or not answer.text.strip():
            return False
        if answer.kind == "command":
            self.notify("Continue with a message; once the session goes on, m runs commands.",
                        severity="warning", timeout=6)
            return False
        await main.continue_session(answer.text)
        return True

    async def _apply(self, choice: FinishChoice, patch: str, issue: str) -> str:
        """Carry out the finish choice; returns the line printed after the app closes."""
        if choice.kind == "branch":
            if self.repo is None:
                raise FinishError("no repository path was given; save the patch instead")
            commit = await asyncio.to_thread(
                commit_patch_to_branch, self.repo, patch, choice.value,
                f"navtui: {issue_title(issue, 70)}",
            )
            said = f"navtui: committed to branch {choice.value} ({commit[:10]})"
            # The changes moved to the branch: the checkout is as it was before the session.
            if not await self._undo_session():
                return (f"{said}; the changes are also still in the working tree (files changed "
                        "outside the session were not overwritten).")
            return (f"{said}; the working tree is back to how it was before the session "
                    f"(`git switch {shlex.quote(choice.value)}` to go on there).")
        if choice.kind == "patch":
            path = await asyncio.to_thread(save_patch, patch, choice.value)
            return f"navtui: patch saved to {path} (the changes are also still in the working tree)."
        if choice.kind == "discard":
            if not await self._undo_session("Discard"):
                raise FinishError("nothing discarded: files changed outside the session")
            return "navtui: discarded; the working tree is back to how it was before the session."
        if not patch.strip():
            return "navtui: the session changed no file."
        if not self.resumable:  # the repo goes away with the app: say nothing about its tree
            return "navtui: done."
        return "navtui: the changes are in the working tree."

    async def _undo_session(self, doing: str = "Restore") -> bool:
        """Put the working tree back to how it was before the session (your own uncommitted
        work stays); files changed outside the session are overwritten only if the user says so
        (False when not)."""
        assert self.main is not None
        try:
            await self.main.run_on_session(lambda session: session.undo(0))
        except UnsafeRestore as refused:
            if not await self.push_screen_wait(OverwriteScreen(doing, refused.paths)):
                return False
            await self.main.run_on_session(lambda session: session.undo(0, force=True))
        return True

    def _leave(self, code: int, message: str) -> None:
        session = self.main.session if self.main is not None else None
        if session is not None and session.started and self.resumable and self.repo is not None:
            message += "\n" + resume_line(session.id, self.repo)
        self.result_message = message
        if self.main is not None:
            self.main.shutdown()
        self.exit(code, return_code=code)  # `run_tui` prints `result_message` once it is out

    # --- command palette ----------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        if isinstance(screen, MainScreen):
            for row in screen.key_rows():
                if row.action in PALETTE_SKIPS or not hasattr(screen, f"action_{row.action}"):
                    continue
                if screen.check_action(row.action, ()):
                    yield SystemCommand(f"{row.description} ({row.keys})",
                                        f"{row.what} · {row.binding_id}",
                                        getattr(screen, f"action_{row.action}"))
        yield from super().get_system_commands(screen)

    def action_quit(self) -> None:
        """ctrl+q: asks, as q does, while something runs; otherwise leaves at once, the same way
        (the session saved and the way back printed)."""
        main = self.main
        if main is None or main.session is None:
            self.post_message(SessionEnded(SessionFinished(FinishReason.QUIT, "quit by the user")))
        elif main.finished is not None:
            reason = main.finished.reason
            self._leave(FinishReason(reason).exit_code, "navtui: the changes are in the working tree.")
        else:
            main.quit_session(ask=main.generating or main.running)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":  # a text field's ctrl+c copies
            return not isinstance(self.focused, Input | TextArea)
        return True

    def action_interrupt(self) -> None:
        """ctrl+c: on the session (or a dialog over it) stop what runs, or ask to quit when
        pressed twice; before a session, say how to quit."""
        if self.main is not None and self.main.is_attached:
            self.main.action_interrupt()
        else:
            self.action_help_quit()

    def notify(self, message: str, *, title: str = "", **kwargs) -> None:
        """A toast; Markdown code marks in its text are not shown raw."""
        super().notify(plain(message), title=plain(title), **kwargs)

    def action_toggle_dark(self) -> None:
        self.theme = "navtui-light" if self.theme == "navtui-dark" else "navtui-dark"


def run_tui(
    session_or_factory: Session | SessionFactory,
    *,
    repo: str | Path | None = None,
    issue: str | None = None,
    resume: ResumeFactory | None = None,
    auto: bool = False,
    settings: Config | None = None,
    load_relay: LoadRelay | None = None,
    backend_info: dict[str, str] | None = None,
    resumable: bool = True,
) -> int:
    """Run the app until the user leaves; returns the exit code (0 submitted, 1 error,
    2 limit or exhausted script, 3 quit). `settings`: the config file's theme, keymap, rules.
    `resumable=False`: the repo does not outlive the app (the demo's), so nothing suggests
    resuming it."""
    settings = settings or Config(Path())
    app = NavApp(session_or_factory, repo=repo, issue=issue, resume=resume, auto=auto,
                 theme=settings.theme, keymap=settings.keymap, allow_rules=settings.rules,
                 clipboard=settings.clipboard, load_relay=load_relay, backend_info=backend_info, resumable=resumable)
    app.run()
    if app.result_message:  # as it is, not wrapped: the resume command must paste whole
        print(app.result_message, file=sys.stderr)
    return app.return_code if app.return_code is not None else 1
