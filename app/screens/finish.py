"""The end of a session: its diff, and what to do with the changes."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Static

from agent_core.sanitize import visible
from widgets.diff_view import DiffView


@dataclass
class FinishChoice:
    """`kind`: keep | branch | patch | discard; `value`: the branch name or patch path."""

    kind: str
    value: str = ""


class FinishScreen(Screen[FinishChoice]):
    """`headline` says how the session ended; `message`, shown under it unless empty, the detail."""

    CSS_PATH = "finish.tcss"
    BINDINGS = [
        Binding("k", "choose('keep')", "Keep", id="navtui.finish.keep",
                tooltip="Leave the changes in the working tree"),
        Binding("b", "choose('branch')", "Commit to branch", id="navtui.finish.branch",
                tooltip="Commit the changes to a new branch; your checkout stays as it is"),
        Binding("p", "choose('patch')", "Save patch", id="navtui.finish.patch",
                tooltip="Write the session's patch to a file"),
        Binding("x", "choose('discard')", "Discard", id="navtui.finish.discard",
                tooltip="Restore the tree to how it was before the session"),
    ]

    def __init__(self, headline: str, message: str, patch: str, branch: str, patch_path: str) -> None:
        super().__init__()
        self.headline = headline
        self.message = message
        self.patch = patch
        self.branch = branch
        self.patch_path = patch_path

    def compose(self) -> ComposeResult:
        with Vertical(id="finish"):
            yield Label(self.headline, id="finish-title", markup=False)
            if self.message:
                yield Static(visible(self.message), id="finish-message", markup=False)
            yield DiffView(id="finish-diff", empty_text="The session changed nothing.")
            with Horizontal(classes="finish-field"):
                yield Label("Branch", classes="field-label")
                yield Input(self.branch, id="branch-name")
            with Horizontal(classes="finish-field"):
                yield Label("Patch file", classes="field-label")
                yield Input(self.patch_path, id="patch-path")
            with Horizontal(id="finish-buttons"):
                yield Button("Keep changes (k)", variant="primary", id="keep")
                yield Button("Commit to branch (b)", id="branch")
                yield Button("Save patch (p)", id="patch")
                yield Button("Discard (x)", variant="error", id="discard")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DiffView).set_diff(self.patch)
        self.query_one("#keep", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id:
            self.action_choose(event.button.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_choose("branch" if event.input.id == "branch-name" else "patch")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and isinstance(self.focused, Input):
            return None
        return True

    def action_choose(self, kind: str) -> None:
        value = ""
        if kind == "branch":
            value = self.query_one("#branch-name", Input).value.strip()
        elif kind == "patch":
            value = self.query_one("#patch-path", Input).value.strip()
        self.dismiss(FinishChoice(kind, value))
