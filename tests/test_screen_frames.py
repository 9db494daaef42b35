"""What a frame of the main screen repaints and arranges: a key that switches the lower pane, a
change of the screen's state, a layout elsewhere on the screen (counted, never timed)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from agent_core.actions import Bash, Submit
from app.screens.main import MainScreen
from app.tui import NavApp
from tests.fixtures.tui import Watch, make_session
from tests.test_widgets import Harness
from widgets.diff_view import DiffView
from widgets.step_timeline import StepTimeline

SIZE = (120, 36)


async def test_a_layout_elsewhere_leaves_the_timeline_scrollbar_alone():
    timeline, other = StepTimeline(), Static("other")
    timeline.styles.height = 10  # so that hiding `other` leaves the timeline's size as it is
    async with Harness(timeline, other).run_test(size=(80, 20)) as pilot:
        for index in range(1, 41):  # more steps than lines: the scrollbar shows
            timeline.set_step(index, "executed", f"bash step {index}")
        await pilot.pause()
        scrollbar = timeline.vertical_scrollbar
        assert timeline.show_vertical_scrollbar
        repaints: list[object] = []
        real_refresh = scrollbar.refresh
        scrollbar.refresh = lambda *a, **kw: (repaints.append(a), real_refresh(*a, **kw))[1]
        other.display = False  # a layout of the screen that leaves the timeline's size as it is
        await pilot.pause()
        assert not timeline.screen._layout_required
        assert repaints == []
        scrollbar.refresh = real_refresh
        for index in range(41, 61):  # the timeline itself grows: its scrollbar follows
            timeline.set_step(index, "executed", f"bash step {index}")
        await pilot.pause()
        assert scrollbar.window_virtual_size == timeline.virtual_size.height >= 60


def running_on(app: NavApp, index: int) -> bool:
    main = app.main
    return main is not None and main.pending is not None and main.pending.index == index


async def test_state_changes_repaint_nothing_and_switching_diffs_lays_out_nothing(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("true")), ("Done.", Submit())])
    app, watch = NavApp(session, repo=git_repo), Watch()
    async with app.run_test(size=SIZE, message_hook=watch) as pilot:
        await watch.until(lambda: running_on(app, 1), "proposal 1")
        main = app.main
        assert isinstance(main, MainScreen)
        await pilot.pause()
        main.running, main.generating = True, False
        assert not main._repaint_required  # state is not drawn by the screen itself
        main.running = False
        await pilot.pause()

        compositor = main._compositor
        arranged: list[str] = []
        real_arrange, real_reflow = compositor._arrange_root, compositor.reflow
        compositor._arrange_root = lambda *a, **kw: (arranged.append("arrange"), real_arrange(*a, **kw))[1]
        compositor.reflow = lambda *a, **kw: (arranged.append("layout"), real_reflow(*a, **kw))[1]
        layouts: list[int] = []
        diffs = main.query_one(DiffView)
        for shown, says in (("tab-step-diff", "This step changed no file."),
                            ("tab-session-diff", "No changes yet."), ("tab-output", None)):
            await pilot.press("d")
            await pilot.pause()
            assert main.query_one("#lower").active == shown
            assert says is None or diffs.render_line(0).text.strip().startswith(says)
            layouts.append(arranged.count("layout"))
        compositor._arrange_root, compositor.reflow = real_arrange, real_reflow
        # from the output to a diff and back is one layout each (arranging the screen once, no
        # frame after it arranging it again); from one diff to the other is a repaint only
        assert layouts == [1, 1, 2]
        assert arranged == ["layout", "arrange", "layout", "arrange"]
