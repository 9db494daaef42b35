"""What the main screen renders per step: auto mode renders steps together, every step stays in
the timeline and the final state is right; the Footer follows key changes only; diffs in a hidden
tab wait until shown."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Footer

import app.screens.main as main_module
from agent_core.actions import Bash, Submit
from app.screens.finish import FinishScreen
from app.tui import NavApp
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import Watch, make_session, showing
from tests.test_widgets import TWO_FILES, Harness
from widgets.action_card import ActionCard
from widgets.diff_view import DiffView
from widgets.lower_pane import OUTPUT, SESSION_DIFF, STEP_DIFF, LowerPane
from widgets.output_log import OutputLog
from widgets.pane_tabs import PaneTabs
from widgets.step_timeline import StepTimeline

SIZE = (120, 36)


async def test_auto_mode_renders_steps_together_and_keeps_every_step_in_the_timeline(
    git_repo: Path, monkeypatch
):
    monkeypatch.setattr(main_module, "AUTO_FRAME", 1.0)  # steps surely arrive within one frame
    turns = [(f"Step {n}.", Bash(f"echo {n} > f{n}.txt")) for n in range(1, 9)] + [("Done.", Submit())]
    session = make_session(git_repo, turns)
    app, watch = NavApp(session, repo=git_repo, auto=True), Watch()
    shown: list[str] = []
    async with app.run_test(size=SIZE, message_hook=watch) as pilot:
        main = app.main
        assert main is not None
        output = main.query_one(OutputLog)
        real_show = output.show_observation
        output.show_observation = lambda title, observation: (shown.append(title), real_show(title, observation))[1]
        await watch.until(lambda: showing(app, FinishScreen), "finish screen", timeout=60)
        timeline = main.query_one(StepTimeline)
        assert timeline.steps == list(range(1, 10))
        assert [timeline.entries[n].status for n in range(1, 9)] == ["executed"] * 8
        assert timeline.entries[9].status == "submitted"
        assert 0 < len(shown) < 9  # several steps' outputs rendered as one: the last of them
        assert shown[-1].startswith("Step 9 · submit the fix")
        assert main.query_one(DiffView).documents["step"].diff == session.records[-1].diff
        assert all(f"f{n}.txt" in main.session_diff for n in range(1, 9))
        assert main.query_one(ActionCard).state == "done"
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")


async def test_the_footer_is_rebuilt_only_when_a_key_is_enabled_or_disabled(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("Done.", Submit())])
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        main = app.main
        assert main is not None
        footer = main.query_one(Footer)

        def keys() -> list[str]:
            return [str(key.render()) for key in footer.query("FooterKey")]

        await watch.until(lambda: main.pending is not None, "proposal 1")
        await watch.until(lambda: any("Approve" in key for key in keys()), "the Footer offers a")
        await pilot.pause()
        rebuilt: list[int] = []
        real_recompose = footer.recompose
        footer.recompose = lambda: (rebuilt.append(1), real_recompose())[1]
        main.running = True  # state changes that end where they began: no key changes
        main.generating = True
        main.running = main.generating = False
        await pilot.pause(0.2)  # several frames
        assert rebuilt == []
        proposal, main.pending = main.pending, None  # approve/reject/edit are disabled
        await watch.until(lambda: not any("Approve" in key for key in keys()), "Approve gone")
        await pilot.pause(0.2)
        assert rebuilt == [1]
        main.pending = proposal
        await watch.until(lambda: any("Approve" in key for key in keys()), "Approve back")
        await pilot.pause(0.2)
        assert rebuilt == [1, 1]


async def test_a_diff_not_on_screen_is_prepared_when_shown_and_each_diff_keeps_its_scroll():
    pane = LowerPane()
    long_diff = "diff --git a/big b/big\n--- a/big\n+++ b/big\n@@ -0,0 +1,60 @@\n" + "+x\n" * 60

    async with Harness(pane).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = pane.query_one(DiffView)
        view.set_diff(long_diff, "step")
        view.set_diff(TWO_FILES, "session")
        await pilot.pause()
        step, session = view.documents["step"], view.documents["session"]
        assert step.diff == long_diff and step.files == [] and session.files == []  # the output is shown
        pane.active = STEP_DIFF
        await pilot.pause()
        assert view.file_titles == ["big  +60 -0"] and session.files == []  # only what is on screen
        view.scroll_y = 7
        await pilot.pause()
        pane.active = SESSION_DIFF
        await pilot.pause()
        assert view.file_titles == ["calc/ops.py  +1 -1", "notes.txt  +2 -0"] and view.scroll_y == 0
        pane.active = STEP_DIFF
        await pilot.pause()
        assert view.scroll_y == 7 and view.render_line(0).text.strip() == "+x"
        view.set_diff(long_diff.replace("big", "other"), "step")  # a new diff starts at the top
        await pilot.pause()
        assert view.file_titles == ["other  +60 -0"] and view.scroll_y == 0
        await pilot.click(PaneTabs, offset=(2, 0))  # a click on a tab ("Output") shows its pane
        await pilot.pause()
        assert pane.active == OUTPUT and pane.query_one(OutputLog).display and not view.display


async def test_a_step_that_plants_a_hook_raises_a_warning_with_its_step(git_repo: Path):
    plant = ("printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit"
             " && chmod +x .git/hooks/pre-commit")
    session = make_session(git_repo, [("Plant.", Bash(plant)), ("Done.", Submit())])
    app, watch = NavApp(session, repo=git_repo, auto=True), Watch()
    notified: list[str] = []
    async with app.run_test(size=SIZE, message_hook=watch) as pilot:
        main = app.main
        assert main is not None
        real_notify = main.notify
        main.notify = lambda message, **kw: (notified.append(str(message)),
                                             real_notify(message, **kw))[1]
        await watch.until(lambda: showing(app, FinishScreen), "finish screen", timeout=60)
        await pilot.press("q")
        await watch.until(lambda: app.return_code is not None, "exit")
    [said] = [n for n in notified if "git's own files" in n]
    assert "step 1 changed git's own files: .git/hooks/pre-commit (a hook" in said
    assert "moved to quarantine" in said
    assert "git_warnings" in session.records[0].extra
    assert not (git_repo / ".git" / "hooks" / "pre-commit").exists()


async def test_switching_diffs_paints_again_only_the_rows_that_differ():
    step = TWO_FILES
    session = TWO_FILES.replace("+two\n", "+three\n")  # the same files, one line apart
    view = DiffView(documents={"step": "none", "session": "none"})
    async with Harness(view).run_test(size=(80, 24)) as pilot:
        view.set_diff(step, "step")
        view.set_diff(session, "session")
        await pilot.pause()
        painted: list[int] = []
        real_refresh = view.refresh

        def refresh(*regions, **options):
            painted.extend(y for region in regions for y in range(region.y, region.bottom))
            if not regions:
                painted.append(-1)  # the whole view
            return real_refresh(*regions, **options)

        view.refresh = refresh
        before = [view.render_line(y).text for y in range(view.size.height)]
        view.show("session")
        after = [view.render_line(y).text for y in range(view.size.height)]
        view.refresh = real_refresh
        differing = [y for y, (old, new) in enumerate(zip(before, after)) if old != new]
        assert differing and len(differing) < len(after) // 4
        assert painted == differing
        await pilot.pause()
        assert "+three" in "\n".join(after) and "+two" not in "\n".join(after)


async def test_pane_tabs_move_with_the_arrows_and_light_the_active_label():
    tabs = PaneTabs({"one": "One", "two": "Second"})
    seen: dict[int, str] = {}  # (a message is seen at each widget it bubbles through)
    async with Harness(tabs).run_test(size=(40, 10), message_hook=lambda m: isinstance(
            m, PaneTabs.Chosen) and seen.setdefault(id(m), m.tab)) as pilot:
        tabs.focus()
        await pilot.press("right")
        assert tabs.active == "two" and list(seen.values()) == ["two"]
        await pilot.press("right")  # (round to the first)
        assert tabs.active == "one" and list(seen.values()) == ["two", "one"]
        await pilot.pause()
        assert tabs.render_line(0).text.startswith(" One  Second ")
        rule = tabs.render_line(1)
        lit = tabs.get_component_rich_style("pane-tabs--highlight")
        assert [len(segment.text) for segment in rule if segment.style == lit] == [3]  # "One"
        assert rule.text.startswith("╸━━━╺")


async def test_the_session_thread_hears_whether_the_session_diff_is_on_screen(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("true")), ("Done.", Submit())])
    app, watch = NavApp(session, repo=git_repo), Watch()
    async with app.run_test(size=SIZE, message_hook=watch) as pilot:
        await watch.until(lambda: app.main is not None and app.main.pending is not None, "proposal 1")
        driver = app.main.driver
        heard: list[bool] = []
        real = driver.show_session_diff
        driver.show_session_diff = lambda shown: (heard.append(shown), real(shown))[1]
        for _ in range(2):  # output -> step diff -> session diff
            await pilot.press("d")
            await pilot.pause()
        await pilot.click("#lower PaneTabs", offset=(12, 0))  # the step diff tab, by the mouse
        await pilot.pause()
        await pilot.click("#lower PaneTabs", offset=(2, 0))  # the output tab
        await pilot.pause()
        assert heard == [False, True, False, False]
        assert app.main.query_one(LowerPane).active == OUTPUT
