"""How many layouts of the whole screen a change costs on the main screen's kind of screen
(`ArrangedOnce`): one for what asked before it, none for a change that leaves every size as it
was (counted, never timed)."""

from __future__ import annotations

from textual import messages
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from agent_core.actions import Bash
from agent_core.steps import Observation
from app.textual_patches import ArrangedOnce
from widgets.action_card import ActionCard
from widgets.output_log import OutputLog
from widgets.thought_stream import ThoughtStream


class Counted(ArrangedOnce):
    """The screen under test, counting its layouts."""

    def __init__(self, *widgets) -> None:
        super().__init__()
        self.widgets = widgets
        self.layouts = 0
        real = self._compositor.reflow
        self._compositor.reflow = lambda *a, **kw: (setattr(self, "layouts", self.layouts + 1), real(*a, **kw))[1]

    def compose(self) -> ComposeResult:
        yield from self.widgets


class Host(App[None]):
    def __init__(self, screen: Counted) -> None:
        super().__init__()
        self.counted = screen

    def on_mount(self) -> None:
        self.push_screen(self.counted)


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.pause()


async def test_a_widget_mounted_lays_the_screen_out_once():
    box = Vertical()
    screen = Counted(box)
    async with Host(screen).run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        for text in ("one", "two\nlines", "three"):
            before = screen.layouts
            await box.mount(Static(text))
            await settle(pilot)
            # Textual's own screen: twice (the new widget's virtual size asked again)
            assert screen.layouts - before == 1
        assert [w.size.height for w in box.children] == [1, 2, 1]


async def test_a_layout_request_made_before_a_layout_began_lays_out_nothing_more():
    static = Static("text")
    screen = Counted(static)
    async with Host(screen).run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        early = messages.Layout(static)
        screen._refresh_layout()
        before = screen.layouts
        screen.post_message(early)  # handled after the layout: it saw that request already
        await settle(pilot)
        assert screen.layouts == before
        screen.post_message(messages.Layout(static))  # asked after it: laid out
        await settle(pilot)
        assert screen.layouts == before + 1


async def test_a_turn_mounted_in_the_thought_stream_lays_the_screen_out_once():
    stream = ThoughtStream()
    screen = Counted(stream)
    async with Host(screen).run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        for n in range(1, 9):  # past the view: the stream's own height (virtual size) grows
            before, scrollbar = screen.layouts, stream.show_vertical_scrollbar
            await stream.begin_turn(f"Step {n}")  # (folds the turn before)
            await stream.end_turn("A thought\n\nover\n\nfour lines.")
            await settle(pilot)
            # a scrollbar that comes makes the turns narrower: they are laid out again for it
            assert screen.layouts - before == (1 if stream.show_vertical_scrollbar == scrollbar else 2), n
        assert stream.virtual_size.height > stream.size.height
        assert stream.vertical_scrollbar.window_virtual_size == stream.virtual_size.height


async def test_new_output_lays_out_nothing():
    log = OutputLog()
    log.styles.height = 6
    screen = Counted(log, Static("below"))
    async with Host(screen).run_test(size=(60, 20)) as pilot:
        log.show_observation("first", Observation(output="a\nb\nc", exit_code=0))
        await settle(pilot)
        before = screen.layouts
        for n in range(3):  # (a Log's scrollbars are always there: nothing comes or goes)
            log.show_observation(f"step {n}", Observation(output=f"{n}\nb\nc", exit_code=0))
            await settle(pilot)
        assert log.render_line(0).text.strip() == "step 2"
        long = Observation(output="\n".join(f"line {i}" for i in range(40)) + "x" * 80, exit_code=0)
        log.show_observation("long", long)
        await settle(pilot)
        assert screen.layouts == before  # Textual's Log: a layout of the screen at each write
        assert log.virtual_size == (80 + len("line 39"), 42)
        assert log.vertical_scrollbar.window_virtual_size == 42
        assert log.max_scroll_y == 42 - log.scrollable_content_region.height
        log.scroll_end(animate=False)
        await settle(pilot)
        assert log.render_line(log.scrollable_content_region.height - 1).text.strip().startswith("line 39")


async def test_a_command_of_the_same_height_on_the_card_lays_out_nothing():
    card = ActionCard()
    screen = Counted(card, Static("below"))
    async with Host(screen).run_test(size=(60, 20)) as pilot:
        card.show_action("Step 1", Bash("ls"), "ls", None)
        await settle(pilot)
        height, before = card.size.height, screen.layouts
        for n in range(2, 5):
            card.show_action(f"Step {n}", Bash(f"grep -n {n} f.py"), f"grep -n {n} f.py", None)
            await settle(pilot)
        assert screen.layouts == before
        assert "grep -n 4 f.py" in card.query_one("#card-command", Static).render().plain
        card.show_action("Step 5", Bash("true &&\nfalse"), "true &&\nfalse", None)
        await settle(pilot)
        assert screen.layouts > before and card.size.height == height + 1
