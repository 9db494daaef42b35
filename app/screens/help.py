"""The keys, in one place."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# navtui keys

The model proposes **one action at a time**; nothing runs until you decide.
Every executed step is a git checkpoint you can undo.

| Key | What it does |
|-----|--------------|
| `a` | approve: run the proposed action |
| `A` | always allow: this action kind (or, for bash, this command prefix) from now on |
| `r` | reject, with feedback the model reads next turn (empty = plain reject) |
| `e` | edit the action before it runs (`ctrl+s` saves, `ctrl+e` opens `$EDITOR`) |
| `u` | undo the last executed step (files and conversation) |
| `w` | rewind to the step selected in the timeline |
| `m` | your own message to the model, or `!command` to run yourself |
| `t` | toggle auto mode (approve everything, within the limits) |
| `esc` | stop the generation in progress (`g` goes on), or kill the command that runs |
| `d` | switch between the step diff and the session diff |
| `s` | show or hide the step timeline (Enter on a step shows it in full) |
| `?` | this help |
| `q` | quit: the session is saved and can be resumed with `navtui --resume ID REPO` |

`ctrl+p` opens the command palette with the same decisions.
"""


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="navtui.help.close", tooltip="Close help")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog help"):
            yield Markdown(HELP)

    def action_close(self) -> None:
        self.dismiss(None)
