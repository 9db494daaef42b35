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


async def test_timeline_updates_one_entry_without_repainting_the_others():
    timeline = StepTimeline()
    async with Harness(timeline).run_test(size=(80, 30)) as pilot:
        for index in range(1, 6):
            timeline.set_step(index, "executed", f"bash step {index}")
        await pilot.pause()
        assert not timeline.screen._layout_required
        repainted: list = []
        real_refresh = timeline.refresh
        timeline.refresh = lambda *regions, **kw: (repainted.append(regions), real_refresh(*regions, **kw))[1]
        timeline.set_step(6, "pending", "bash six")
        timeline.set_step(3, "rejected")
        assert [r.height for regions in repainted for r in regions] == [1, 1, 1]  # one line each
        assert [r.y for regions in repainted for r in regions] == [5, 4, 2]  # (4: the highlight left it)
        assert not timeline.screen._layout_required  # no layout of the screen asked for
        timeline.refresh = real_refresh
        await pilot.pause()
        assert line(timeline, 2).startswith("✗ 3 bash step 3")
        assert line(timeline, 5).startswith("? 6 bash six")
        assert line(timeline, 1).startswith("✓ 2 bash step 2")
        assert timeline.highlighted_step == 6  # the highlight follows the newest entry

        timeline.set_step(6, "executed", "bash six, edited")
        await pilot.pause()
        assert line(timeline, 5).startswith("✓ 6 bash six, edited")

        timeline.drop_after(4)
        timeline.set_step(5, "running", "bash again")
        await pilot.pause()
        assert timeline.steps == [1, 2, 3, 4, 5]
        assert line(timeline, 4).startswith("… 5 bash again")
        assert line(timeline, 5) == ""


async def test_a_step_added_out_of_order_lands_in_order():
    timeline = StepTimeline()
    async with Harness(timeline).run_test() as pilot:
        for index in (1, 4, 2):
            timeline.set_step(index, "executed", f"bash {index}")
        timeline.highlighted = 1
        timeline.set_step(3, "pending", "bash 3")
        await pilot.pause()
        assert timeline.steps == [1, 2, 3, 4]
        assert timeline.highlighted_step == 2
        assert [line(timeline, y)[:3] for y in range(4)] == ["✓ 1", "✓ 2", "? 3", "✓ 4"]


async def test_a_long_timeline_scrolls_to_the_highlight_and_keys_move_it():
    timeline = StepTimeline()
    seen: dict = {}  # a message is seen once at each node it bubbles through: count it once

    def chosen() -> list[int]:
        return [m.index for m in seen.values() if isinstance(m, StepTimeline.StepChosen)]

    async with Harness(timeline).run_test(
        size=(80, 12), message_hook=lambda m: seen.setdefault(id(m), m)
    ) as pilot:
        for index in range(1, 101):
            timeline.set_step(index, "executed", f"bash step {index}")
        await pilot.pause()
        height = timeline.scrollable_content_region.height
        top = timeline.scroll_offset.y
        assert top <= 99 < top + height and top > 50  # it followed the new entries
        assert line(timeline, 99 - top).startswith("✓ 100")
        timeline.scroll_to(y=10, animate=False, immediate=True)
        timeline.set_step(101, "pending", "bash one more")
        await pilot.pause()
        assert timeline.scroll_offset.y == 10  # scrolled up by the user: it stays there
        timeline.drop(101)
        timeline.focus()
        await pilot.press("end")
        await pilot.pause()
        top = timeline.scroll_offset.y
        assert timeline.highlighted_step == 100 and top <= 99 < top + height
        assert line(timeline, 99 - top).startswith("✓ 100")
        await pilot.press("up", "up", "enter")
        await pilot.pause()
        assert timeline.highlighted_step == 98
        assert chosen() == [98]
        await pilot.press("home")
        await pilot.pause()
        assert timeline.highlighted_step == 1 and timeline.scroll_offset.y == 0
        await pilot.click(timeline, offset=(3, 4))  # the border is line 0: the fourth entry
        await pilot.pause()
        assert timeline.highlighted_step == 4
        assert chosen() == [98, 4]


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


async def test_following_the_session_redraws_the_list_once_per_half_page():
    timeline = StepTimeline()
    async with Harness(timeline).run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        height = timeline.scrollable_content_region.height
        tops = []
        for index in range(1, 61):
            timeline.set_step(index, "executed", f"bash step {index}")
            top = timeline.scroll_offset.y
            assert top <= index - 1 < top + height  # every new step is in view
            tops.append(top)
        jumps = len(set(tops)) - 1
        assert 0 < jumps <= (60 - height) // (height // 2) + 1
        await pilot.pause()
        assert line(timeline, 59 - timeline.scroll_offset.y).startswith("✓ 60")
