"""What the two widgets that grow with a session cost per update, with a long session on screen.

* Step timeline: per step, the three `set_step` calls a step makes (pending, running, executed)
  plus the repaint they cause, at 50 / 200 / 500 steps. Side by side with the same widget
  rebuilding every option on each call (what it did before).
* Thought stream: one paced append (a 40-character fragment, then waiting until it is on
  screen) with 0 and 29 earlier turns in the stream, and the number of widgets mounted; side by
  side with every turn left open as Markdown (what it did before).

Each figure is the median CPU time (process_time: other engineers share the cores) over the
measured updates, minus the median of an idle repaint wait
(the harness's own cost), in one process so load hits both alike; the floor row is three
updates of a one-line Static, what any three visible changes cost on this machine.
Targets: timeline <= 5 ms per step at 500 steps; append cost flat in the number of turns.

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

from widgets.step_timeline import StepTimeline, TimelineEntry  # noqa: E402
from widgets.thought_stream import ThoughtStream  # noqa: E402

THOUGHT = (
    "The divisor in `calc/ops.py` is `len(values) + 1`, so **average** is off by one.\n\n"
    "- read the function\n- fix the divisor\n- run `pytest -q`\n\n"
    "```python\nreturn sum(values) / len(values)\n```\n"
)


class RebuildingTimeline(StepTimeline):
    """The timeline as it was: every option rebuilt on each `set_step`."""

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


async def timeline_cost(kind: type[StepTimeline], steps: int) -> float:
    """Median ms per step over the last 20 of `steps` steps, the harness's idle cost removed."""
    timeline = kind()
    async with Harness(timeline).run_test(size=(120, 40)) as pilot:
        for index in range(1, steps - 19):
            timeline.set_step(index, "executed", f"bash pytest -q tests/test_{index}.py")
        await pilot.pause()
        idle = await idle_cost(pilot)
        times = []
        for index in range(steps - 19, steps + 1):
            started = time.process_time()
            timeline.set_step(index, "pending", f"bash pytest -q tests/test_{index}.py")
            await pilot.pause()
            timeline.set_step(index, "running")
            await pilot.pause()
            timeline.set_step(index, "executed")
            await pilot.pause()
            times.append(time.process_time() - started - 3 * idle)
        return max(statistics.median(times), 0.0) * 1e3


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

    print(f"{'floor: 3 one-line updates':<28} {await floor_cost():>10.2f}  (the least any 3 repaints cost)")
    print(f"{'timeline, ms per step':<28} {'per entry':>10} {'rebuild':>10} {'ratio':>7}  target")
    for steps in (int(s) for s in args.steps.split(",")):
        ours = await timeline_cost(StepTimeline, steps)
        theirs = await timeline_cost(RebuildingTimeline, steps)
        target = "<= 5 ms" if steps == 500 else ""
        print(f"{f'{steps} steps':<28} {ours:>10.2f} {theirs:>10.2f} {theirs / max(ours, 1e-3):>6.1f}x  {target}")
    print()
    print(f"{'thought stream, paced append':<28} {'folded ms':>10} {'widgets':>8} {'all open ms':>12} {'widgets':>8}")
    for earlier in (int(t) for t in args.turns.split(",")):
        cost, mounted = await stream_cost(earlier, open_turns=2)
        unfolded, all_mounted = await stream_cost(earlier, open_turns=10_000)
        print(f"{f'{earlier} earlier turns':<28} {cost:>10.2f} {mounted:>8} {unfolded:>12.2f} {all_mounted:>8}")


if __name__ == "__main__":
    asyncio.run(main())
