"""Widgets that grow with a session stay cheap: folded old turns, per-entry timeline updates."""

from __future__ import annotations

from tests.test_widgets import Harness
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import FoldedTurn, ThoughtStream
from widgets.turn_text import TurnText


async def test_old_turns_fold_to_one_line_and_unfold_on_demand():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(80, 30)) as pilot:
        for turn in range(1, 11):
            await stream.begin_turn(f"Step {turn}")
            await stream.write(f"Thinking about **step {turn}**.\n\nSecond paragraph {turn}.")
            await stream.end_turn(f"Thought {turn}\nmore of thought {turn}" if turn % 2 else None)
        await stream.settled()
        await pilot.pause()
        folded = list(stream.query(FoldedTurn))
        assert [f.title for f in folded] == [f"Step {n}" for n in range(1, 9)]
        assert len(stream.query(TurnText)) == 2  # only the last two turns stay Markdown
        assert all(f.region.height == 1 for f in folded)
        assert str(folded[0].render()) == "▸ Step 1 · Thought 1"
        assert str(folded[1].render()) == "▸ Step 2 · Thinking about **step 2**."

        folded[0].focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not folded[0].folded and folded[0].region.height == 3
        assert "more of thought 1" in str(folded[0].render())
        await pilot.click(folded[0])
        await pilot.pause()
        assert folded[0].folded and folded[0].region.height == 1


async def test_a_long_session_keeps_few_widgets_mounted():
    stream = ThoughtStream(max_turns=30)
    async with Harness(stream).run_test() as pilot:
        for turn in range(60):
            await stream.begin_turn(f"Step {turn}")
            await stream.write("- a\n- b\n\n```\ncode\n```\n" * 3)
            await stream.end_turn()
        await stream.settled()
        await pilot.pause()
        assert len(stream.query(FoldedTurn)) == 28
        assert sum(1 for _ in stream.walk_children()) < 120


def line(timeline: StepTimeline, position: int) -> str:
    return timeline.render_line(position).text.strip()


async def test_timeline_updates_one_entry_without_rebuilding_the_others():
    timeline = StepTimeline()
    async with Harness(timeline).run_test(size=(80, 30)) as pilot:
        for index in range(1, 6):
            timeline.set_step(index, "executed", f"bash step {index}")
        await pilot.pause()
        before = list(timeline.options)
        timeline.set_step(6, "pending", "bash six")
        timeline.set_step(3, "rejected")
        await pilot.pause()
        assert list(timeline.options)[:5] == before  # the same Option objects: nothing rebuilt
        assert line(timeline, 2).startswith("✗ 3 bash step 3")
        assert line(timeline, 5).startswith("? 6 bash six")
        assert line(timeline, 1).startswith("✓ 2 bash step 2")
        assert timeline.highlighted_step == 1  # the first entry got the highlight; it stays

        timeline.set_step(6, "executed", "bash six, edited")
        await pilot.pause()
        assert line(timeline, 5).startswith("✓ 6 bash six, edited")

        timeline.drop_after(4)
        timeline.set_step(5, "running", "bash again")
        await pilot.pause()
        assert [o.id for o in timeline.options] == [f"step-{n}" for n in range(1, 6)]
        assert line(timeline, 4).startswith("… 5 bash again")


async def test_a_step_added_out_of_order_lands_in_order():
    timeline = StepTimeline()
    async with Harness(timeline).run_test() as pilot:
        for index in (1, 4, 2):
            timeline.set_step(index, "executed", f"bash {index}")
        timeline.highlighted = 1
        timeline.set_step(3, "pending", "bash 3")
        await pilot.pause()
        assert [o.id for o in timeline.options] == [f"step-{n}" for n in (1, 2, 3, 4)]
        assert timeline.highlighted_step == 2


async def test_a_note_after_streamed_text_keeps_its_place():
    stream = ThoughtStream()
    async with Harness(stream).run_test() as pilot:
        await stream.begin_turn("Step 1")
        burst = "".join(f"word{n} " for n in range(2_000))
        await stream.write(burst)
        await stream.note("a notice", "info")  # ends the turn: its text is taken in at once
        assert not stream.rendering
        await stream.begin_turn("Step 2")
        await stream.end_turn()  # an empty turn
        await stream.settled()
        await pilot.pause()
        order = [w for w in stream.children if w.has_class("turn-title") or w.has_class("note")]
        assert [str(w.render()) for w in order] == ["Step 1", "a notice", "Step 2"]
        assert stream.query(TurnText).first().source == burst
