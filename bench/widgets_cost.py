"""What the two widgets that grow with a session cost per update, with a long session on screen.

* Step timeline: per step, the three `set_step` calls the main screen makes for a step (pending
  with its summary, running, executed with its summary again) and the frames they cause: two in
  auto mode (a proposal and its approval arrive, and are drawn, together), three for a step the
  user approves; at 50 / 200 / 500 steps. Measured inside the real main screen (`MainScreen`, 120x40, with ten
  turns in the thought stream), where a change that asks for a layout lays out the whole screen.
  Side by side with the timeline as it was before (an `OptionList` re-rendering one option per
  change, kept below as `OptionListTimeline`) and the one before that (rebuilding every option).
* Thought stream: one paced append (a 40-character fragment, then waiting until it is on
  screen) with 0 and 29 earlier turns in the stream, and the number of widgets mounted; side by
  side with every turn left open as Markdown (what it did before).

Each figure is the median CPU time (process_time, the UI thread's thread_time for the timeline:
other engineers share the cores) over the measured updates, minus an idle repaint wait (the
harness's own cost; for the timeline, the same frames drawn idle right after each step), in one
process so load hits both alike. For the timeline, its own part (the UI thread's CPU in its
`set_step` and in rendering its lines for the compositor) is printed beside the whole frames, and
a floor: the same frames with only the status bar's state word changing. The screen changes that
word (and the action card's colour) for each of these events, so every timeline frame changes it
too, and a step pays those frames with or without a timeline; two changes far apart in one frame
make Textual repaint the rows between them (its update is the box around both), which is why the
whole frames cost more than the floor plus the timeline's own part.
Targets: the timeline's own cost <= 5 ms per step at 500 steps; append cost flat in the number of
turns.

    python bench/widgets_cost.py [--steps 50,200,500] [--turns 0,29]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")

from textual.app import App, ComposeResult  # noqa: E402
from textual.content import Content  # noqa: E402
from textual.geometry import Region  # noqa: E402
from textual.strip import Strip  # noqa: E402
from textual.widget import Widget  # noqa: E402
from textual.widgets import OptionList  # noqa: E402
from textual.widgets.option_list import Option  # noqa: E402

import app.screens.main as main_screen  # noqa: E402
from agent_core.sanitize import visible  # noqa: E402
from widgets.status_bar import StatusBar  # noqa: E402
from widgets.step_timeline import STATUS_LOOK, StepTimeline, TimelineEntry  # noqa: E402
from widgets.thought_stream import ThoughtStream  # noqa: E402

THOUGHT = (
    "The divisor in `calc/ops.py` is `len(values) + 1`, so **average** is off by one.\n\n"
    "- read the function\n- fix the divisor\n- run `pytest -q`\n\n"
    "```python\nreturn sum(values) / len(values)\n```\n"
)


class OptionListTimeline(OptionList):
    """The timeline before the Line API one (bench baseline): an OptionList updated per entry."""

    DEFAULT_CSS = StepTimeline.DEFAULT_CSS.replace("StepTimeline", "OptionListTimeline")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[int, TimelineEntry] = {}
        self.border_title = "Steps"

    def set_step(self, index: int, status: str, summary: str | None = None) -> None:
        """Add step `index` or change its status (and summary when given).

        Only that entry's line changes; a step added out of order rebuilds the list.
        """
        summary = None if summary is None else visible(summary)
        entry = self.entries.get(index)
        if entry is None:
            entry = self.entries[index] = TimelineEntry(index, status, summary or "")
            if index < max(self.entries):
                self._rebuild()
                return
            self.add_option(Option(self._prompt(entry), id=f"step-{index}"))
            if self.highlighted is None:
                self.highlighted = self.option_count - 1
            return
        if entry.status == status and (summary is None or summary == entry.summary):
            return
        entry.status = status
        if summary is not None:
            entry.summary = summary
        self._replace_line(self.get_option_index(f"step-{index}"), self._prompt(entry))

    def drop_after(self, to_index: int) -> None:
        """Forget the steps after `to_index` (they were undone; new ones may reuse the numbers)."""
        for index in sorted((i for i in self.entries if i > to_index), reverse=True):
            self.drop(index)

    def drop(self, index: int) -> None:
        """Forget a step that never happened (e.g. a proposal dropped by an undo)."""
        if self.entries.pop(index, None) is not None:
            self.remove_option(f"step-{index}")

    @property
    def highlighted_step(self) -> int | None:
        """Index of the highlighted step, if any."""
        if self.highlighted is None or self.highlighted >= self.option_count:
            return None
        option_id = self.get_option_at_index(self.highlighted).id
        return int(option_id.removeprefix("step-")) if option_id else None

    def _prompt(self, entry: TimelineEntry) -> Content:
        """One line: status icon, step number and the summary cut to the list's width."""
        width = max(12, (self.scrollable_content_region.width or 26) - 1)
        icon, style = STATUS_LOOK.get(entry.status, ("·", "$text-muted"))
        room = max(4, width - len(str(entry.index)) - 3)
        summary = entry.summary if len(entry.summary) <= room else entry.summary[: room - 1] + "…"
        return Content.from_markup(
            f"[{style}]$icon[/] [b]$n[/] $summary", icon=icon, n=entry.index, summary=summary,
        )

    def _replace_line(self, position: int, prompt: Content) -> None:
        """Show `prompt` for the option at `position`, re-rendering only its line.

        `OptionList.replace_option_prompt` drops every option's cached render and line layout
        and repaints the whole list, so each status change would cost as much as drawing the
        list anew. Every prompt here is one line (cut to the width), so the layout stays valid:
        only this option's cached render is dropped and its line repainted (Textual 8's
        `Option._set_prompt` and `OptionList._option_render_cache`).
        """
        option = self.get_option_at_index(position)
        option._set_prompt(prompt)
        cache = self._option_render_cache
        for key in [key for key in cache.keys() if key[0] is option]:
            cache.discard(key)
        self.refresh_line(position)

    def _rebuild(self) -> None:
        keep = self.highlighted_step
        self.set_options(
            Option(self._prompt(entry), id=f"step-{entry.index}")
            for entry in sorted(self.entries.values(), key=lambda e: e.index)
        )
        if keep is not None and keep in self.entries:
            self.highlighted = self.get_option_index(f"step-{keep}")
        elif self.option_count:
            self.highlighted = self.option_count - 1

    def on_resize(self) -> None:
        self._rebuild()


class StandInTimeline(Widget):
    """The floor: a blank widget in the timeline's place whose every `set_step` repaints one of
    its lines, where the real one's current entry is drawn while it follows a session (what any
    change there costs in these frames)."""

    DEFAULT_CSS = StepTimeline.DEFAULT_CSS.replace("StepTimeline", "StandInTimeline")

    def set_step(self, index: int, status: str, summary: str | None = None) -> None:
        self.refresh(Region(0, self.size.height * 3 // 4, self.size.width, 1))

    def render_line(self, y: int) -> Strip:
        return Strip.blank(self.size.width, self.rich_style)


class RebuildingTimeline(OptionListTimeline):
    """The timeline as it was first: every option rebuilt on each `set_step`."""

    def set_step(self, index: int, status: str, summary: str | None = None) -> None:
        entry = self.entries.setdefault(index, TimelineEntry(index, status, summary or ""))
        entry.status = status
        if summary is not None:
            entry.summary = summary
        self._rebuild()


class Harness(App):
    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


async def idle_cost(pilot, samples: int = 30) -> float:
    times = []
    for _ in range(samples):
        started = time.process_time()
        await pilot.pause()
        times.append(time.process_time() - started)
    return statistics.median(times)


class ScreenHarness(App):
    """The real main screen, without a session: the timeline among everything else it shows."""

    def on_mount(self) -> None:
        self.push_screen(main_screen.MainScreen("bench: average is off by one"))


def own_time(widget) -> list[float]:
    """Wrap `widget`'s `set_step` and `render_lines` (where the compositor asks for its lines)
    to add the UI thread's CPU seconds spent in them to the returned one-item list."""
    spent = [0.0]
    for name in ("set_step", "render_lines"):
        method = getattr(widget, name)

        def timed(*args, method=method, **kwargs):
            started = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += time.thread_time() - started

        setattr(widget, name, timed)
    return spent


async def timeline_cost(kind: type, steps: int, together: bool) -> tuple[float, float]:
    """(whole frames, the widget's own part): median ms per step over the last 40 of `steps`
    steps; the whole frames minus the same frames drawn idle.

    Per step: pending (with its summary), running, executed (with its summary again), as the
    main screen calls them; each followed by a frame, or (`together`, auto mode) pending and
    running in one frame, as the screen draws a proposal and its approval that arrive together.
    Each frame also changes the status bar's state word, as the screen does for each of these
    events. The timeline is scrolled to its end, as it is while it follows a session: every
    change is in view and repainted (the OptionList timelines, which do not follow, are scrolled
    by hand, untimed).
    """
    real = main_screen.StepTimeline
    main_screen.StepTimeline = kind  # what MainScreen.compose builds
    try:
        app = ScreenHarness()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            stream = app.screen.query_one(ThoughtStream)
            for turn in range(10):
                await stream.begin_turn(f"Step {turn + 1}")
                await stream.write(THOUGHT)
                await stream.end_turn()
            await stream.settled()
            timeline = app.screen.query_one("#timeline")
            status = app.screen.query_one(StatusBar)
            for index in range(1, steps - 39):
                timeline.set_step(index, "executed", f"bash pytest -q tests/test_{index}.py")
            await pilot.pause()
            spent = own_time(timeline)
            times, owns = [], []
            for index in range(steps - 39, steps + 1):
                summary = f"bash pytest -q tests/test_{index}.py"
                if isinstance(timeline, OptionList):  # it does not follow: show the end, untimed
                    timeline.scroll_to(y=timeline.max_scroll_y + 1, animate=False, immediate=True)
                    await pilot.pause()
                changes = [("pending", summary), ("running", None), ("executed", summary)]
                frames = [changes[:2], changes[2:]] if together else [[c] for c in changes]
                spent[0] = 0.0
                started = time.thread_time()
                for frame in frames:
                    for state, text in frame:
                        status.state = f"{state} {index}"
                        timeline.set_step(index, state, text)
                    await pilot.pause()
                step = time.thread_time() - started
                owns.append(spent[0])
                started = time.thread_time()
                for _ in frames:  # the same frames with nothing to draw
                    await pilot.pause()
                times.append(step - (time.thread_time() - started))
            return max(statistics.median(times), 0.0) * 1e3, statistics.median(owns) * 1e3
    finally:
        main_screen.StepTimeline = real


async def floor_cost() -> float:
    """The same three updates + repaints on a one-line Static: what any visible change costs."""
    from textual.widgets import Static

    label = Static("?")
    async with Harness(label).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        idle = await idle_cost(pilot)
        times = []
        for index in range(20):
            started = time.process_time()
            for status in ("pending", "running", "executed"):
                label.update(f"{status} {index}")
                await pilot.pause()
            times.append(time.process_time() - started - 3 * idle)
        return max(statistics.median(times), 0.0) * 1e3


async def stream_cost(earlier: int, open_turns: int) -> tuple[float, int]:
    """Median ms per paced append with `earlier` finished turns above; widgets mounted."""
    stream = ThoughtStream(open_turns=open_turns)
    async with Harness(stream).run_test(size=(120, 40)) as pilot:
        for turn in range(earlier):
            await stream.begin_turn(f"Step {turn + 1}")
            await stream.write(THOUGHT * 3)
            await stream.end_turn()
        await stream.begin_turn(f"Step {earlier + 1}")
        await stream.settled()
        await pilot.pause()
        idle = await idle_cost(pilot)
        times = []
        for n in range(40):
            started = time.process_time()
            await stream.write(f"word{n} and some more text of a thought. ")
            await stream.settled()
            await pilot.pause()
            times.append(time.process_time() - started - idle)
        mounted = sum(1 for _ in stream.walk_children())
        return max(statistics.median(times), 0.0) * 1e3, mounted


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", default="50,200,500")
    parser.add_argument("--turns", default="0,29")
    args = parser.parse_args()

    print(f"{'floor: 3 one-line updates':<28} {await floor_cost():>10.2f}  (a Static alone in an app)")
    print(f"timeline in the main screen, ms per step (target <= 5 at 500), load {os.getloadavg()[0]:.1f}")
    print(f"  {'':<26} {'----------------- whole frames -----------------':>49} {'-- line API --':>20}")
    print(f"  {'frames per step':<26} {'line API':>9} {'OptionList':>11} {'rebuild':>9} {'stand-in':>9}"
          f" {'adds':>9} {'own':>8}")
    for steps in (int(s) for s in args.steps.split(",")):
        for together, label in ((True, "2 (auto)"), (False, "3 (asking)")):
            ours, own = await timeline_cost(StepTimeline, steps, together)
            before, _ = await timeline_cost(OptionListTimeline, steps, together)
            first, _ = await timeline_cost(RebuildingTimeline, steps, together)
            floor, _ = await timeline_cost(StandInTimeline, steps, together)
            print(f"  {f'{steps} steps, {label}':<26} {ours:>9.2f} {before:>11.2f} {first:>9.2f}"
                  f" {floor:>9.2f} {ours - floor:>9.2f} {own:>8.2f}")
    print("  (stand-in: a blank widget in the timeline's place repainting one line per change, the"
          " floor of these frames;\n   adds: line API - stand-in; own: CPU in its set_step and in"
          " rendering its lines)")
    print()
    print(f"{'thought stream, paced append':<28} {'folded ms':>10} {'widgets':>8} {'all open ms':>12} {'widgets':>8}")
    for earlier in (int(t) for t in args.turns.split(",")):
        cost, mounted = await stream_cost(earlier, open_turns=2)
        unfolded, all_mounted = await stream_cost(earlier, open_turns=10_000)
        print(f"{f'{earlier} earlier turns':<28} {cost:>10.2f} {mounted:>8} {unfolded:>12.2f} {all_mounted:>8}")


if __name__ == "__main__":
    asyncio.run(main())
