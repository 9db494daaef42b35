"""The thought stream's live turn: Markdown split into blocks, drawn per frame, capped while live."""

from __future__ import annotations

import gc
import random

from textual.events import MouseScrollDown, MouseScrollUp

from tests.test_widgets import Harness, rendered
from widgets.markdown_blocks import MarkdownBlocks
from widgets.thought_stream import COLLECT_AFTER, DEFERRED_FULL_COLLECTION, ThoughtStream
from widgets.turn_text import TurnText

DOCUMENT = (
    "Looking at **ops.py** and `average`.\n\n"
    "- check `len(values)`\n- run the tests\n\n"
    "```python\ndef f():\n\n    return 1\n```\n\n"
    "1. first\n\n    indented continuation\n\n"
    "## A heading\n\n"
    "The model writes <tool_call> here.\n"
)


def test_blocks_end_at_blank_lines_outside_fences_and_before_unindented_lines():
    blocks = MarkdownBlocks()
    blocks.add(DOCUMENT)
    assert blocks.finished == [
        "Looking at **ops.py** and `average`.",
        "- check `len(values)`\n- run the tests",
        "```python\ndef f():\n\n    return 1\n```",
        "1. first\n\n    indented continuation",
        "## A heading",
    ]
    assert blocks.tail == "The model writes <tool_call> here.\n"


def test_blocks_are_the_same_however_the_text_is_chunked():
    whole = MarkdownBlocks()
    whole.add(DOCUMENT * 3)
    rng = random.Random(7)
    for _ in range(20):
        pieces, i = MarkdownBlocks(), 0
        text = DOCUMENT * 3
        while i < len(text):
            step = rng.randint(1, 9)
            pieces.add(text[i : i + step])
            i += step
        assert pieces.finished == whole.finished and pieces.tail == whole.tail


def text_of(turn: TurnText) -> str:
    return "\n".join(rendered(turn))


async def test_a_streamed_turn_is_shown_in_full_as_markdown():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(80, 60)) as pilot:
        await stream.begin_turn("Step 1")
        rng = random.Random(3)
        i = 0
        while i < len(DOCUMENT):
            step = rng.randint(1, 6)
            await stream.write(DOCUMENT[i : i + step])
            i += step
            if rng.random() < 0.2:
                await pilot.pause()
        await stream.end_turn()
        await pilot.pause()
        turn = stream.query_one(TurnText)
        shown = text_of(turn)
        assert turn.source == DOCUMENT and stream.text == DOCUMENT
        assert "Looking at ops.py and average." in shown  # emphasis and code rendered, not marked up
        assert "**" not in shown and "`" not in shown
        assert "• check len(values)" in shown and "• run the tests" in shown
        assert "def f():" in shown and "    return 1" in shown
        assert "indented continuation" in shown and "A heading" in shown and "##" not in shown
        assert "The model writes <tool_call> here." in shown  # raw HTML stays visible as text
        assert turn.painted_length == len(DOCUMENT)


async def test_escape_sequences_in_streamed_text_are_shown_not_sent():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(80, 20)) as pilot:
        await stream.begin_turn("Step 1")
        for piece in ("copy \x1b]52;c;", "SGVsbG8=\x07 now \x1b[2J", " and \x9b31m red"):
            await stream.write(piece)
        await stream.settled()
        await pilot.pause()
        shown = text_of(stream.query_one(TurnText))
        assert "\x1b" not in shown and "\x9b" not in shown and "\x07" not in shown
        assert "␛]52;c;SGVsbG8=␇ now ␛[2J" in shown


async def test_a_flood_of_fragments_is_taken_in_once_per_frame():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(80, 20)) as pilot:
        await stream.begin_turn("Step 1")
        await pilot.pause()
        turn = stream.query_one(TurnText)
        updates = []
        original = turn.update_now
        turn.update_now = lambda: (updates.append(len(turn.source)), original())  # type: ignore[method-assign]
        for n in range(500):
            await stream.write(f"w{n} ")
        await pilot.pause(0.1)
        assert updates and len(updates) <= 2  # 500 writes in one go: one update (two at most)
        assert turn.painted_length == len(turn.source)


async def test_a_live_turn_stays_within_the_view_and_scrolls_back_inside_itself():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(60, 12)) as pilot:
        await stream.begin_turn("Step 1")
        for n in range(40):
            await stream.write(f"Line {n} of the thought.\n\n")
        await pilot.pause(0.1)
        turn = stream.query_one(TurnText)
        assert turn.size.height <= stream.scrollable_content_region.height
        assert "Line 39 of the thought." in text_of(turn)  # it shows its end
        assert "Line 0 of the thought." not in text_of(turn)
        for _ in range(5):
            turn.post_message(MouseScrollUp(None, 0, 0, 0, 0, 0, False, False, False))
        await pilot.pause(0.1)
        back = rendered(turn)
        assert "Line 39 of the thought." not in back and "Line 30 of the thought." in back
        await stream.write("Line 40 arrives while scrolled back.")
        await pilot.pause(0.1)
        assert rendered(turn) == back  # what the user reads stays put
        for _ in range(10):
            turn.post_message(MouseScrollDown(None, 0, 0, 0, 0, 0, False, False, False))
        await pilot.pause(0.1)
        assert rendered(turn)[-1] == "Line 40 arrives while scrolled back."  # following the end again
        await stream.end_turn()
        await pilot.pause()
        assert turn.size.height == 41 * 2 - 1  # every line, full height
        assert stream.scroll_y == stream.max_scroll_y > 0  # and the view follows the end


async def test_a_live_turn_keeps_rows_ahead_of_its_text_so_its_height_changes_once_or_twice():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(60, 40)) as pilot:
        await stream.begin_turn("Step 1")
        await pilot.pause()
        turn = stream.query_one(TurnText)
        view = stream.scrollable_content_region.height
        assert turn.size.height == 4  # kept from the start: the first token lays nothing out
        heights = []
        for n in range(30):
            await stream.write(f"{'' if n == 0 else chr(10) * 2}Line {n}.")
            turn.update_now()
            await pilot.pause()
            assert [row for row in rendered(turn) if row][-1] == f"Line {n}."  # its end is shown
            assert turn.size.height <= view
            heights.append(turn.size.height)
        assert sorted(set(heights)) == [4, 16, view]  # 59 lines, 3 heights (a line each: 59)
        assert heights == sorted(heights)
        await stream.end_turn()
        await pilot.pause()
        assert turn.size.height == 59 and rendered(turn)[-1] == "Line 29."  # done: no row kept


async def test_full_collections_wait_while_a_turn_streams():
    stream = ThoughtStream()
    original = gc.get_threshold()
    async with Harness(stream).run_test() as pilot:
        await stream.begin_turn("Step 1")
        assert gc.get_threshold()[2] == DEFERRED_FULL_COLLECTION
        await stream.end_turn()
        await pilot.pause()
        assert gc.get_threshold()[2] == DEFERRED_FULL_COLLECTION  # until its last text is painted
        await pilot.pause(COLLECT_AFTER + 0.2)
        assert gc.get_threshold() == original
        await stream.begin_turn("Step 2")
    assert gc.get_threshold() == original  # an app closed mid-turn leaves the collector as it was


async def test_many_turns_keep_few_widgets_and_fold_with_their_text():
    stream = ThoughtStream(max_turns=10)
    async with Harness(stream).run_test(size=(80, 30)) as pilot:
        for turn in range(1, 41):
            await stream.begin_turn(f"Step {turn}")
            await stream.write(f"Thought **{turn}**.\n\n- a\n- b\n")
            await stream.end_turn()
        await pilot.pause()
        assert len(stream.query(TurnText)) == 2
        titles = [w for w in stream.children if w.has_class("turn-title") or "FoldedTurn" == type(w).__name__]
        assert len(titles) == 10 and sum(1 for _ in stream.walk_children()) < 30
        folded = stream.query("FoldedTurn").first()
        assert folded.title == "Step 31" and "Thought **31**." in folded.full_text


async def test_a_resize_rewraps_the_turn_and_a_theme_change_recolours_it():
    stream = ThoughtStream()
    words = " ".join(f"word{n}" for n in range(60))
    async with Harness(stream).run_test(size=(100, 40)) as pilot:
        await stream.begin_turn("Step 1")
        await stream.write(f"Use `code` here.\n\n{words}\n")
        await stream.end_turn()
        await pilot.pause()
        turn = stream.query_one(TurnText)
        wide = rendered(turn)
        await pilot.resize_terminal(50, 40)
        await pilot.pause()
        narrow = rendered(turn)
        assert len(narrow) > len(wide) and max(map(len, narrow)) <= 50
        assert " ".join(" ".join(narrow).split()) == " ".join(" ".join(wide).split())  # same words
        first = turn.render_line(0).simplify()._segments
        assert [s.text for s in first[:2]] == ["Use ", "code"]
        code_style = first[1].style
        pilot.app.theme = "textual-light" if pilot.app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        assert turn.render_line(0).simplify()._segments[1].style != code_style


async def test_code_being_written_is_highlighted_once_its_turn_is_done():
    stream = ThoughtStream()
    code = "```python\n" + "".join(f"def f{n}(x):\n    return x + {n}  # add\n" for n in range(5))
    async with Harness(stream).run_test(size=(80, 40)) as pilot:
        await stream.begin_turn("Step 1")
        await stream.write(code)  # the fence is still open: the block is being written
        await pilot.pause(0.1)
        turn = stream.query_one(TurnText)

        def code_colours() -> set:
            return {seg.style.color for y in range(turn.size.height)
                    for seg in turn.render_line(y).simplify()._segments
                    if seg.text.strip() and seg.style and seg.style.color}

        assert "return x + 4  # add" in text_of(turn)
        assert len(code_colours()) == 1  # plain while written
        await stream.write("```\n")
        await stream.end_turn()
        await pilot.pause()
        assert "return x + 4  # add" in text_of(turn) and len(code_colours()) > 2  # highlighted


def test_the_cut_is_at_the_last_list_item_or_after_the_last_code_line():
    blocks = MarkdownBlocks()
    blocks.add("Intro line\n- one\n- two\n- thr")
    cut, fence = blocks.cut
    assert blocks.tail[cut:] == "- thr" and fence == ""
    blocks.add("ee\n\n```python\ndef f():\n\n    return 1\n    x")
    cut, fence = blocks.cut
    assert blocks.tail[cut:] == "    x" and fence == "```python"
    blocks.add("\n```\nafter the fence")
    assert blocks.cut == (0, "")  # a fence closed inside the block: the block is rendered whole


async def test_a_frame_renders_the_item_being_written_and_the_turn_looks_as_rendered_whole():
    items = "".join(f"- item {n} of the list, with `code` and **bold** words\n" for n in range(30))
    code = "```python\n" + "".join(f"value_{n} = compute({n})  # step\n" for n in range(30))
    document = f"A paragraph first.\n{items}\n\nThen code:\n{code}```\n\nThe end.\n"
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(90, 120)) as pilot:
        await stream.begin_turn("Step 1")
        await pilot.pause()
        turn = stream.query_one(TurnText)
        rendered_markup: list[str] = []
        original = turn._lines
        turn._lines = lambda markup, width, draft=False: (  # type: ignore[method-assign]
            rendered_markup.append(markup), original(markup, width, draft))[1]
        rng = random.Random(5)
        i, width = 0, turn.content_size.width
        while i < len(document):
            fragment = document[i : i + rng.randint(1, 12)]
            await stream.write(fragment)
            i += len(fragment)
            rendered_markup.clear()
            turn.update_now()
            if "\n" not in fragment:  # no line completed: only the line being written is rendered
                if "item 25" in turn.source and "item 27" not in turn.source:
                    assert max(map(len, rendered_markup)) < len(items) // 10  # one item, not the list
                if "value_25" in turn.source and "value_27" not in turn.source:
                    assert max(map(len, rendered_markup)) < len(code) // 10  # one line, not the block
            shown = [strip.text.rstrip() for strip in turn._tail[1 if turn._fixed else 0 :]]
            whole = turn._markdown_lines(turn._blocks.tail, width, draft=True)  # in one go
            assert shown == [strip.text.rstrip() for strip in whole], turn.source[-80:]


async def test_a_frame_paints_again_only_the_lines_that_changed_and_the_screen_matches_a_full_paint():
    document = DOCUMENT + "".join(f"- point {n}, with `code`, longer than one line of this view\n" for n in range(8))
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(50, 80)) as pilot:
        await stream.begin_turn("Step 1")
        await pilot.pause()
        turn = stream.query_one(TurnText)
        painted_lines = []
        original = turn.render_line
        turn.render_line = lambda y: (painted_lines.append(y), original(y))[1]  # type: ignore[method-assign]
        rng = random.Random(11)
        i = height = repainted = kept_height = 0
        while i < len(document):
            fragment = document[i : i + rng.randint(1, 12)]
            await stream.write(fragment)
            i += len(fragment)
            painted_lines.clear()
            turn.update_now()
            await pilot.pause()  # the app's frame
            if turn.size.height == height:  # the turn kept its height: the frame needs no layout
                repainted += len(painted_lines)
                kept_height += height
            height = turn.size.height
            painted = [strip.text for strip in turn.render_lines(turn.size.region)]  # as on screen
            turn.refresh()  # everything painted again from scratch
            assert painted == [strip.text for strip in turn.render_lines(turn.size.region)], turn.source[-60:]
        assert height > 20 and kept_height > 500
        assert repainted < kept_height / 4  # each such frame painted its last lines, not all


async def test_streaming_builds_no_markdown_parser(monkeypatch):
    import rich.markdown

    built = []
    real = rich.markdown.MarkdownIt

    def counting(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(rich.markdown, "MarkdownIt", counting)
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(80, 30)) as pilot:
        await stream.begin_turn("Step 1")
        for n in range(40):
            await stream.write(f"word{n} `code` and more ")
            await pilot.pause(0.02)
        await stream.end_turn()
        await pilot.pause()
        assert "word39" in text_of(stream.query_one(TurnText)) and built == []


def stream_shape(stream: ThoughtStream) -> list[tuple[str, str]]:
    """What the stream shows, child by child: kind and text (folded turns by their full text)."""
    shape = []
    for child in stream.children:
        if isinstance(child, TurnText):
            shape.append(("turn" + ("" if child.live else " ended"), child.source))
        elif type(child).__name__ == "FoldedTurn":
            shape.append(("folded", f"{child.title}|{child.full_text}"))
        elif not child.has_class("spacer"):
            shape.append((" ".join(sorted(child.classes)), str(child.render())))
    return shape


async def feed_turns(stream: ThoughtStream, first: int, last: int, *, live_last: bool) -> None:
    for turn in range(first, last + 1):
        await stream.begin_turn(f"Step {turn}")
        await stream.write(f"Thought **{turn}** <tool_call>raw</tool_call>")
        if turn % 4 == 0:
            await stream.note(f"note after {turn}", "warning")
        elif not (live_last and turn == last):
            await stream.end_turn(f"Thought **{turn}**." if turn % 3 else None)


async def test_turns_held_for_a_drain_are_mounted_once_folded_as_if_shown_one_by_one():
    one_by_one, held = ThoughtStream(max_turns=6), ThoughtStream(max_turns=6)
    mounted: list[str] = []
    real_mount = held.mount
    held.mount = lambda *widgets, **kw: (mounted.extend(type(w).__name__ for w in widgets),
                                          real_mount(*widgets, **kw))[1]
    async with Harness(one_by_one, held).run_test(size=(80, 60)) as pilot:
        for stream in (one_by_one, held):
            await feed_turns(stream, 1, 3, live_last=False)  # shown one by one in both
        await pilot.pause()
        mounted.clear()
        for batch in ((4, 12), (13, 14), (15, 15)):  # more turns than max_turns, then fewer than open
            await feed_turns(one_by_one, *batch, live_last=batch[1] == 15)
            held.hold()
            await feed_turns(held, *batch, live_last=batch[1] == 15)
            assert held.live is None and held.text.startswith(f"Thought **{batch[1]}**")
            await held.release()
            await pilot.pause()
            assert stream_shape(held) == stream_shape(one_by_one)
        assert held.live is not None and held.live.live  # the last turn still takes text
        await held.write(" more")
        await one_by_one.write(" more")
        await held.end_turn("Done.")
        await one_by_one.end_turn("Done.")
        await pilot.pause()
        assert stream_shape(held) == stream_shape(one_by_one)
    # 12 turns, 6 of them kept: 4 mounted folded and 2 open in the first drain, 2 open in the
    # next (the earlier open ones folded), 1 in the last; no turn mounted open and folded later
    # within one drain
    assert mounted.count("TurnText") == 2 + 2 + 1
