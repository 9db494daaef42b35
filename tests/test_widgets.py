"""Widgets on their own: diff splitting, streaming, timeline, status bar, output log."""

from __future__ import annotations

from textual.app import App, ComposeResult

from agent_core.actions import Bash, Edit, Search, StrReplaceEditor, Submit
from agent_core.steps import Observation
from widgets.action_card import ActionCard, action_summary
from widgets.diff_view import DiffView, render_file, split_diff
from widgets.issue_pane import IssuePane, issue_title
from widgets.output_log import OutputLog, observation_lines
from widgets.status_bar import StatusBar
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import ThoughtStream

TWO_FILES = (
    "diff --git a/calc/ops.py b/calc/ops.py\n"
    "index 1..2 100644\n"
    "--- a/calc/ops.py\n"
    "+++ b/calc/ops.py\n"
    "@@ -5,3 +5,3 @@\n"
    " def average(values):\n"
    "-    return sum(values) / (len(values) + 1)\n"
    "+    return sum(values) / len(values)\n"
    "diff --git a/notes.txt b/notes.txt\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/notes.txt\n"
    "@@ -0,0 +1,2 @@\n"
    "+one\n"
    "+two\n"
)


class Harness(App[None]):
    def __init__(self, *widgets) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self.widgets


def test_split_diff_counts_lines_per_file():
    files = split_diff(TWO_FILES)
    assert [(f.path, f.added, f.removed) for f in files] == [("calc/ops.py", 1, 1), ("notes.txt", 2, 0)]
    assert split_diff("") == []


def test_render_file_trims_long_diffs_and_drops_headers():
    body = "".join(f"+line {i}\n" for i in range(50))
    file = split_diff(f"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1,50 @@\n{body}")[0]
    title, rendered = render_file(file, max_lines=10)
    assert title.plain == "x  +50 -0"
    lines = rendered.plain.splitlines()
    assert lines[0].startswith("@@") and "diff --git" not in rendered.plain
    assert lines[-1] == "… 41 more lines"


def test_action_summary_names_each_kind():
    assert action_summary(Bash("pytest -q\nmore")) == "bash pytest -q"
    assert action_summary(Search("def f", None)) == "search 'def f' in ."
    assert action_summary(Edit("a.py", 3, 4, "x")) == "edit a.py:3-4"
    assert action_summary(StrReplaceEditor("view", "a.py")) == "str_replace_editor view a.py"
    assert action_summary(Submit()) == "submit the fix"
    assert len(action_summary(Bash("x" * 200), width=20)) == 20


def test_issue_title_and_observation_lines():
    assert issue_title("\n\n## Crash on empty input\nbody") == "Crash on empty input"
    assert issue_title("   ") == "(empty issue)"
    lines = observation_lines(Observation("a\nb", exit_code=1, truncated=True))
    assert lines == ["[exit 1 · output truncated]", "a", "b"]


async def test_thought_stream_streams_and_keeps_a_bounded_history():
    stream = ThoughtStream(max_turns=2, open_turns=2)
    async with Harness(stream).run_test() as pilot:
        for turn in range(1, 4):
            await stream.begin_turn(f"Step {turn}")
            for word in ("Looking ", "at <tool_call> ", "**ops.py**"):
                await stream.write(word)
            assert stream.text == "Looking at <tool_call> **ops.py**"
            await stream.end_turn(f"thought {turn}" if turn == 3 else None)
        await stream.settled()
        await pilot.pause()
        titles = [str(w.render()) for w in stream.query(".turn-title")]
        assert titles == ["Step 2", "Step 3"]
        turns = list(stream.query(".turn"))
        assert turns[0].source == "Looking at <tool_call> **ops.py**"
        assert turns[1].source == "thought 3" and stream.text == "thought 3"


async def test_thought_stream_takes_a_burst_in_at_the_next_frame_without_losing_text():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(80, 20)) as pilot:
        await stream.begin_turn("Step 1")
        burst = "".join(f"word{n} " for n in range(3_000))
        for piece in (burst[:7_000], burst[7_000:]):
            await stream.write(piece)
        assert stream.rendering  # waiting for the next frame, not rendered on the spot
        await pilot.pause(0.1)
        assert not stream.rendering
        turn = stream.live
        assert turn is not None and turn.source == burst and turn.painted_length == len(burst)
        await stream.end_turn("x" * 9_000)  # too long to re-render at once: the streamed text stays
        await stream.settled()
        await pilot.pause()
        assert stream.query_one(".turn").source == burst


async def test_diff_view_shows_one_title_per_file_and_handles_big_diffs_in_a_thread():
    view = DiffView()
    async with Harness(view).run_test() as pilot:
        view.set_diff(TWO_FILES)
        await pilot.pause()
        assert view.file_titles == ["calc/ops.py  +1 -1", "notes.txt  +2 -0"]
        big = "diff --git a/big b/big\n--- a/big\n+++ b/big\n@@ -0,0 +1,3000 @@\n" + "+x\n" * 3000
        view.set_diff(big)
        await view.app.workers.wait_for_complete()
        await pilot.pause()
        assert [f.path for f in view.files] == ["big"] and view.files[0].added == 3000
        many = "".join(f"diff --git a/f{n} b/f{n}\n--- a/f{n}\n+++ b/f{n}\n@@ -1 +1 @@\n-a\n+b\n"
                       for n in range(150))
        view.set_diff(many)
        await view.app.workers.wait_for_complete()
        await pilot.pause()
        assert len(view.files) == 150 and len(view.file_titles) == 100
        assert "50 more file(s)" in view.document.lines[-1].content.plain
        view.set_diff("")
        await pilot.pause()
        assert rendered(view)[0] == " No changes."


async def test_timeline_orders_steps_drops_undone_ones_and_reports_the_chosen_step():
    timeline = StepTimeline()
    seen: list = []
    async with Harness(timeline).run_test(message_hook=seen.append) as pilot:
        timeline.set_step(2, "pending", "bash ls")
        timeline.set_step(1, "executed", "read a.py")
        timeline.set_step(2, "rejected")
        timeline.set_step(3, "executed", "bash echo")
        assert timeline.steps == [1, 2, 3]
        assert timeline.entries[2].summary == "bash ls" and timeline.entries[2].status == "rejected"
        timeline.drop_after(2)
        assert timeline.steps == [1, 2]
        timeline.focus()
        timeline.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert {m.index for m in seen if isinstance(m, StepTimeline.StepChosen)} == {1}


async def test_status_bar_and_card_and_log_render_what_they_are_given():
    status, card, log = StatusBar(), ActionCard(), OutputLog(max_lines=5)
    async with Harness(status, card, log).run_test(size=(120, 30)) as pilot:
        status.model, status.dialect, status.step, status.max_steps = "replay", "toolcall", 3, 50
        status.context_used, status.context_limit, status.policy = 15_000, 16_384, "auto"
        await pilot.pause()
        text = status.render().plain
        assert text == "navtui │ starting │ step 3/50 │ auto │ replay │ toolcall │ ctx 15.0k/16.4k"
        status.styles.width = 40
        await pilot.pause()
        assert status.render().plain == "navtui │ starting │ step 3/50 │ auto"
        status.styles.width = 120
        status.tokens_per_second = 41.6
        await pilot.pause()
        assert "42 tok/s" in status.render().plain
        card.show_action("Step 3", Edit("a.py", 1, 1, "x"), "edit a.py lines 1-1", TWO_FILES)
        assert card.has_class("-pending") and card.query_one("#card-diff").display
        card.show_status("thinking", "thinking…")
        assert card.has_class("-thinking") and not card.has_class("-pending")
        assert not card.query_one("#card-diff").display
        log.show_observation("Step 1", Observation("\n".join(str(i) for i in range(20)), exit_code=0))
        assert log.line_count == 5 and log.lines[-1] == "19"


async def test_thought_stream_starts_at_the_top_and_follows_the_end_once_full():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(60, 10)) as pilot:
        await stream.begin_turn("Step 1")
        await stream.write("short")
        await stream.settled()
        await pilot.pause()
        assert stream.scroll_y == 0 and stream.query_one(".turn-title").region.y == 1
        for n in range(40):
            await stream.write(f"line {n}\n\n")
        await stream.settled()
        await pilot.pause()
        assert stream.max_scroll_y > 0 and stream.scroll_y == stream.max_scroll_y


def rendered(widget) -> list[str]:
    """The widget's content lines as rendered for the screen (after CSS and wrapping), right-trimmed."""
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


async def test_diffs_keep_indentation_and_scroll_sideways_instead_of_cropping():
    wide = "x" * 150
    diff = TWO_FILES.replace(" def average(values):\n", f' def average(values):\n     """Mean."""\n-    {wide}\n', 1)
    card, view = ActionCard(), DiffView()
    async with Harness(card, view).run_test(size=(80, 40)) as pilot:
        card.show_action("Step 1", Edit("calc/ops.py", 5, 6, "x"), "edit calc/ops.py", diff)
        view.set_diff(diff)
        await pilot.pause()
        card_lines = rendered(card.query_one("#card-diff"))
        view_lines = [line[1:] for line in rendered(view)]  # (after the view's one-cell margin)
        for lines in (card_lines, view_lines):
            assert " def average(values):" in lines
            assert '     """Mean."""' in lines
        assert f"-    {wide}" in card_lines
        cut = next(line for line in view_lines if line.startswith("-    x"))
        assert len(cut) < len(wide)  # the view shows what fits, and scrolls to the rest
        for scroller in (card, view):
            assert scroller.show_horizontal_scrollbar and scroller.max_scroll_x > 0
        view.scroll_x = view.max_scroll_x
        await pilot.pause()
        assert any(line.rstrip().endswith("x" * 20) for line in rendered(view))
        assert rendered(card.query_one("#card-command"))[0] == "edit calc/ops.py"


async def test_thought_stream_keeps_the_space_after_inline_code():
    stream = ThoughtStream()
    async with Harness(stream).run_test(size=(100, 10)) as pilot:
        await stream.begin_turn("Step 2")
        for chunk in ("It prints 3.0. `", "average", "` divides", " by `len(values) + 1`."):
            await stream.write(chunk)
        await stream.settled()
        await pilot.pause()
        lines = rendered(stream.query_one(".turn"))
        assert lines[0] == "It prints 3.0. average divides by len(values) + 1."


def test_a_folded_turn_summary_shows_no_markdown_code_marks():
    from widgets.thought_stream import FoldedTurn

    folded = FoldedTurn("Step 3", "I will look at `calc/ops.py` and ``average()`` first.\n\nmore")
    assert folded.line == "▸ Step 3 · I will look at calc/ops.py and average() first."
    assert "`" not in folded.full_text
