"""The output of the last command (or the selected step), trimmed to a bounded number of lines."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Log

from agent_core.sanitize import visible
from agent_core.steps import Observation, StepRecord
from widgets.action_card import action_summary
from widgets._css import css_beside


def observation_lines(observation: Observation) -> list[str]:
    """The lines to show for an observation: a status line, then its output."""
    status = []
    if observation.exit_code is not None:
        status.append(f"exit {observation.exit_code}")
    if observation.truncated:
        status.append("output truncated")
    if observation.error:
        status.append(f"error: {visible(observation.error)}")
    header = [f"[{' · '.join(status)}]"] if status else []
    return header + visible(observation.output).splitlines()


class OutputLog(Log):
    """A `Log` holding at most `max_lines` lines (older ones are dropped).

    Its lines never change its own size (the pane sets its height) and its scrollbars are always
    there (a `Log` scrolls both ways), so a new virtual size (each write, and the widths Textual
    measures in a thread a little later) moves its scrollbars and repaints it instead of laying
    out the whole screen.
    """

    DEFAULT_CSS = css_beside(__file__)

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self, size: Size) -> None:
        self._scroll_update(size)

    def __init__(self, *, max_lines: int = 2_000, id: str | None = None) -> None:
        super().__init__(max_lines=max_lines, highlight=False, auto_scroll=False, id=id)
        self.record: StepRecord | None = None  # the step whose output is shown

    def write_lines(self, lines: Iterable[str], scroll_end: bool | None = None) -> Self:
        """As `Log.write_lines`, but a blank line stays a line (`Log` splits each line again,
        and `"".splitlines()` is no line at all)."""
        return super().write_lines([line or " " for line in lines], scroll_end)

    def show_observation(self, title: str, observation: Observation | None) -> None:
        """Replace the log's content with `title` and the observation's output."""
        self.clear()
        shown = ["(not run)"] if observation is None else observation_lines(observation)
        self.write_lines([visible(title), *shown])  # one write: Textual measures each in a thread
        self.scroll_home(animate=False)

    def show_record(self, record: StepRecord) -> None:
        """Show the step's output under a title naming the step and its action (as run)."""
        self.record = record
        action = record.action or record.proposed.action
        self.show_observation(f"Step {record.index} · {action_summary(action, width=200)}", record.observation)
