"""The proposed action as a card: its kind, the exact command that will run, the diff it will make."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.reactive import reactive
from textual.widgets import Static

from agent_core.actions import Action, Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.hunks import Hunk
from agent_core.sanitize import visible
from agent_core.steps import Origin, StepRecord, StepStatus
from widgets._css import css_beside
from widgets.card_text import CardText
from widgets.diff_view import highlight_diff
from widgets.hunk_list import HunkList


def action_summary(action: Action, width: int = 60) -> str:
    """One line naming what the action does, for timelines and titles."""
    if isinstance(action, Bash):
        text = action.command.strip().splitlines()[0] if action.command.strip() else "(empty)"
    elif isinstance(action, Read):
        text = action.path
    elif isinstance(action, Search):
        text = f"{action.pattern!r} in {action.path or '.'}"
    elif isinstance(action, Edit):
        text = f"{action.path}:{action.start}-{action.end}"
    elif isinstance(action, StrReplaceEditor):
        text = f"{action.command} {action.path}"
    elif isinstance(action, Submit):
        text = "submit the fix"
    else:
        text = repr(action)
    text = f"{action.kind} {text}" if not isinstance(action, Submit) else text
    text = visible(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def user_edits_summary(record: StepRecord, width: int = 60) -> str:
    """One line for a checkpoint of the user's own edits: `your edits: a.txt, b.txt`."""
    paths = record.user_edits or []
    text = visible("your edits: " + ", ".join(paths))
    return text if len(text) <= width else text[: width - 1] + "…"


def hunks_only(diff: str) -> str:
    """The diff from its first `@@` hunk on (file headers are already in the card's title)."""
    lines = diff.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("@@")), 0)
    return "\n".join(lines[first:])


class ActionCard(VerticalScroll):
    """Shows one proposal (or what the session is doing while there is none).

    `state` is `idle`, `thinking`, `pending` (waiting for the user), `running` or `done`; the
    border colour follows it.
    """

    DEFAULT_CSS = css_beside(__file__)

    state: reactive[str] = reactive("idle")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Action"
        self.command_shown = ""
        self._status: tuple[str, str] | None = None  # the status shown, while no action is
        self.preview_diff: str | None = None

    def compose(self) -> ComposeResult:
        yield CardText("", id="card-command", markup=False)
        yield Static("", id="card-diff")
        yield HunkList(id="card-hunks")

    def watch_state(self, old: str, new: str) -> None:
        # One style update for the swap, not two: each walks the card and its children.
        self.remove_class(f"-{old}", update=False)
        self.add_class(f"-{new}")

    def show_status(self, state: str, message: str) -> None:
        """No proposal on the card: just say what is happening (a status already shown is left
        as it is: updating its text would lay the screen out again)."""
        if self._status == (state, message) and self.state == state:
            return
        self._status = (state, message)
        self.state = state
        self.command_shown = ""
        self.preview_diff = None
        self.border_title = "Action"
        self.border_subtitle = ""
        self.query_one("#card-command", CardText).show(visible(message))
        self._hide_diff()
        self._hide_hunks()

    def show_action(
        self, title: str, action: Action, command_shown: str, preview_diff: str | None,
        state: str = "pending",
    ) -> None:
        """Show `action` with the exact text that runs and, for edits, the diff it will make."""
        self._status = None
        self.state = state
        self.command_shown = command_shown
        self.preview_diff = preview_diff
        self.border_title = title
        self.border_subtitle = action.kind
        language = "bash" if isinstance(action, Bash) else None
        shown = visible(command_shown)
        command = highlight(shown, language=language) if language else Content(shown)
        self.query_one("#card-command", CardText).show(command)
        if preview_diff:
            diff_widget = self.query_one("#card-diff", Static)
            diff_widget.update(highlight_diff(hunks_only(preview_diff)))
            diff_widget.display = True
        else:
            self._hide_diff()
        self._hide_hunks()
        self.scroll_home(animate=False)

    def show_hunks(self, hunks: Sequence[Hunk]) -> HunkList:
        """The proposal's diff preview as its hunks, to keep, drop or edit one by one."""
        self._hide_diff()
        hunk_list = self.query_one(HunkList)
        hunk_list.show_hunks(hunks)
        hunk_list.display = True
        return hunk_list

    def _hide_hunks(self) -> None:
        hunk_list = self.query_one(HunkList)
        if hunk_list.display:
            hunk_list.show_hunks(())
            hunk_list.display = False

    def show_record(self, record: StepRecord) -> None:
        """A step is over: the user's own step says so in place of what the card showed; the
        model's stays on the card, marked done."""
        if record.status is StepStatus.USER_EDITS:
            self.show_status("done", f"Your edits are kept as checkpoint {record.index}.")
        elif record.origin is Origin.USER:
            self.show_status("done", f"Your command ran as step {record.index}.")
        else:
            self.state = "done"

    def _hide_diff(self) -> None:
        """No diff on the card (one already hidden is left alone: emptying it again would lay
        out the screen)."""
        diff_widget = self.query_one("#card-diff", Static)
        if diff_widget.display:
            diff_widget.update("")
            diff_widget.display = False
