"""The pane under the action card: the step's output, its diff or the session's, behind tabs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message

from widgets._css import css_beside
from widgets.diff_view import DiffView
from widgets.output_log import OutputLog
from widgets.pane_tabs import PaneTabs

OUTPUT, STEP_DIFF, SESSION_DIFF = "tab-output", "tab-step-diff", "tab-session-diff"
TABS = {OUTPUT: "Output", STEP_DIFF: "Step diff", SESSION_DIFF: "Session diff"}
DIFFS = {STEP_DIFF: "step", SESSION_DIFF: "session"}  # tab -> the diff view's document


class LowerPane(Vertical):
    """Tabs over the output log and one diff view that holds both diffs; the tab shown is
    `active`.

    Switching between the two diffs (the `d` key) is a repaint of the view: the step's and the
    session's diff are two documents of one Line API widget, where two widgets would be a change
    of `display`, and so a layout of the whole screen, at every switch. Only going to or from
    the output changes which widget is displayed.
    """

    DEFAULT_CSS = css_beside(__file__)

    class Shown(Message):
        """Tab `tab` is shown now."""

        def __init__(self, tab: str) -> None:
            super().__init__()
            self.tab = tab

    def compose(self) -> ComposeResult:
        yield PaneTabs(TABS)
        yield OutputLog(id="output")
        empty = {"step": "This step changed no file.", "session": "No changes yet."}
        diffs = DiffView(documents=empty, id="diffs")
        diffs.display = False
        yield diffs

    @property
    def active(self) -> str:
        """The tab shown (`OUTPUT`, `STEP_DIFF` or `SESSION_DIFF`)."""
        return self.query_one(PaneTabs).active

    @active.setter
    def active(self, tab: str) -> None:
        self.query_one(PaneTabs).active = tab
        self._show(tab)

    def on_pane_tabs_chosen(self, event: PaneTabs.Chosen) -> None:
        event.stop()
        self._show(event.tab)

    def _show(self, tab: str) -> None:
        diffs = self.query_one(DiffView)
        if tab in DIFFS:
            diffs.show(DIFFS[tab])
        self.query_one(OutputLog).display = tab == OUTPUT
        diffs.display = tab != OUTPUT
        self.post_message(self.Shown(tab))
