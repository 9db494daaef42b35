"""The end of a session: its diff, and what to do with the changes."""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Static

from agent_core.sanitize import visible
from app.screens.confirm import ConfirmScreen
from widgets.diff_view import DiffView, split_diff
from widgets.plain_text import plain


@dataclass
class FinishChoice:
    """`kind`: keep | branch | patch | discard | continue; `value`: the branch name or patch path."""

    kind: str
    value: str = ""


class FinishScreen(Screen[FinishChoice]):
    """`headline` says how the session ended; `message`, shown under it unless empty, the detail.

    With no changes there is nothing to commit, save or discard: the screen says so in one line
    and offers only to leave.
    """

    CSS_PATH = "finish.tcss"
    AUTO_FOCUS = "#keep"
    BINDINGS = [
        Binding("k", "choose('keep')", "Keep", id="navtui.finish.keep",
                tooltip="Leave the changes in the working tree"),
        Binding("b", "choose('branch')", "Branch", id="navtui.finish.branch",
                tooltip="Commit the changes to a new branch; the working tree goes back to "
                "how it was before the session"),
        Binding("p", "choose('patch')", "Save patch", id="navtui.finish.patch",
                tooltip="Write the session's patch to a file"),
        Binding("x", "discard", "Discard", id="navtui.finish.discard",
                tooltip="Restore the tree to how it was before the session (asks first)"),
        Binding("c", "continue_session", "Continue", id="navtui.finish.continue",
                tooltip="Continue with a message: the model goes on from here, reading it next"),
        Binding("q", "leave", "Quit", id="navtui.finish.quit",
                tooltip="Leave navtui; any changes stay in the working tree"),
    ]

    def __init__(self, headline: str, message: str, patch: str, branch: str, patch_path: str) -> None:
        super().__init__()
        self.headline = headline
        self.message = message
        self.patch = patch
        self.branch = branch
        self.patch_path = patch_path

    @property
    def has_changes(self) -> bool:
        return bool(self.patch.strip())

    def compose(self) -> ComposeResult:
        with Vertical(id="finish"):
            yield Label(self.headline, id="finish-title", markup=False)
            if self.message:
                yield Static(visible(plain(self.message)), id="finish-message", markup=False)
            if not self.has_changes:
                yield Static("The session changed no file: there is nothing to keep, commit or save.",
                             id="finish-empty", markup=False)
                with Horizontal(id="finish-buttons"):
                    yield Button("Quit (q)", variant="primary", id="keep")
                    yield Button("Continue with a message (c)", id="continue")
                yield Footer(compact=True, show_command_palette=False)
                return
            yield DiffView(documents={"patch": "The session changed nothing."}, diff=self.patch,
                           id="finish-diff")
            with Horizontal(classes="finish-field"):
                yield Label("Branch", classes="field-label")
                yield Input(self.branch, id="branch-name")
            with Horizontal(classes="finish-field"):
                yield Label("Patch file", classes="field-label")
                yield Input(self.patch_path, id="patch-path")
            with Horizontal(id="finish-buttons"):
                yield Button("Keep (k)", variant="primary", id="keep")
                yield Button("Commit to branch (b)", id="branch")
                yield Button("Save patch (p)", id="patch")
                yield Button("Discard (x)", variant="error", id="discard")
                yield Button("Continue (c)", id="continue")
        yield Footer(compact=True, show_command_palette=False)  # (q fits at 80 columns)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "discard":
            self.action_discard()
        elif event.button.id == "continue":
            self.action_continue_session()
        elif event.button.id == "keep" and not self.has_changes:
            self.action_leave()
        elif event.button.id:
            self.action_choose(event.button.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_choose("branch" if event.input.id == "branch-name" else "patch")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("choose", "discard", "leave", "continue_session") and isinstance(self.focused, Input):
            return None
        if action == "discard" or (action == "choose" and parameters):
            return self.has_changes
        return True

    def action_leave(self) -> None:
        """`q`: leave navtui; changes, if any, stay in the working tree (as with keep)."""
        self.dismiss(FinishChoice("keep"))

    def action_continue_session(self) -> None:
        """`c`: the session goes on; the app asks for the message the model reads next."""
        self.dismiss(FinishChoice("continue"))

    @work(exclusive=True, group="finish-confirm")
    async def action_discard(self) -> None:
        if not self.has_changes:
            return
        files = [f.path for f in split_diff(self.patch)]
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        if await self.app.push_screen_wait(ConfirmScreen(
            "Discard the session's changes?",
            f"The working tree goes back to how it was before the session; the changes to "
            f"{shown} are dropped. Your own uncommitted work from before the session is kept.",
            confirm="Discard",
        )):
            self.dismiss(FinishChoice("discard"))

    def action_choose(self, kind: str) -> None:
        value = ""
        if kind == "branch":
            value = self.query_one("#branch-name", Input).value.strip()
        elif kind == "patch":
            value = self.query_one("#patch-path", Input).value.strip()
        self.dismiss(FinishChoice(kind, value))
