"""Snapshots of the main screens (pytest-textual-snapshot). Update deliberately with
`pytest tests/test_snapshots.py --snapshot-update`, then look at the SVGs. In a browser they are
exact; librsvg (`rsvg-convert`) drops the leading non-breaking spaces of each text run (indented
diff lines, the space after inline code) unless told to keep them:
`sed 's/<svg /<svg xml:space="preserve" /' X.svg | rsvg-convert -o x.png`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from agent_core.actions import Bash, StrReplaceEditor, Submit
from app.tui import NavApp
from tests.fixtures.tui import make_session
from widgets.status_bar import StatusBar
from widgets.thought_stream import ThoughtStream

FIX = StrReplaceEditor(
    command="str_replace", path="calc/ops.py",
    old_str="    return sum(values) / (len(values) + 1)\n", new_str="    return sum(values) / len(values)\n",
)
TURNS = [
    ("The issue says the mean is too small: the divisor may be off. Let me run the tests.",
     Bash("python3 -c 'from calc.ops import average; print(average([2, 4, 6]))'")),
    ("It prints 3.0. `average` divides by `len(values) + 1`; it should divide by `len(values)`.", FIX),
    ("Done.", Submit()),
]
SESSION_ID = "20260101-000000-snap00"


async def until(pilot: Pilot, condition: Callable[[], object], timeout: float = 30.0) -> None:
    """Wait (polling the app) until `condition()` holds; the session runs on its own thread."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out preparing the snapshot"
        await pilot.pause(0.02)


def freeze(app: NavApp) -> None:
    """Fix what changes from run to run: cursor blink, the measured token rate, and the thought
    stream's scrollbar thumb (the compositor may scroll the anchored stream during layout without
    redrawing its scrollbar, so the thumb's position depends on frame timing)."""
    for stream in app.screen.query(ThoughtStream):
        stream.styles.scrollbar_visibility = "hidden"
    for widget in app.screen.query("TextArea, Input"):
        assert isinstance(widget, TextArea | Input)
        widget.cursor_blink = False
    if app.main is not None:
        app.main.query_one(StatusBar).tokens_per_second = 42.0


def proposal_app(git_repo: Path, theme: str = "navtui-dark") -> tuple[NavApp, Callable]:
    session = make_session(git_repo, TURNS, session_id=SESSION_ID)
    app = NavApp(session, repo="repo", theme=theme)

    async def at_step_two(pilot: Pilot) -> None:
        await until(pilot, lambda: app.main and app.main.pending and app.main.pending.index == 1)
        await pilot.press("a")
        await until(pilot, lambda: app.main.pending and app.main.pending.index == 2
                    and "average" in app.main.query_one("#output").lines[0]
                    and not app.main.query_one("#thoughts").rendering)
        await pilot.pause()
        freeze(app)
        await pilot.pause()

    return app, at_step_two


def test_main_screen_wide(git_repo: Path, snap_compare):
    app, ready = proposal_app(git_repo)
    assert snap_compare(app, terminal_size=(140, 40), run_before=ready)


def test_main_screen_80x24(git_repo: Path, snap_compare):
    app, ready = proposal_app(git_repo)
    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


def test_main_screen_light_200x50(git_repo: Path, snap_compare):
    app, ready = proposal_app(git_repo, theme="navtui-light")
    assert snap_compare(app, terminal_size=(200, 50), run_before=ready)


def test_help_screen(git_repo: Path, snap_compare):
    app, ready = proposal_app(git_repo)

    async def help_open(pilot: Pilot) -> None:
        await ready(pilot)
        await pilot.press("question_mark")

    assert snap_compare(app, terminal_size=(100, 34), run_before=help_open)


def test_help_screen_80x24(git_repo: Path, snap_compare):
    app, ready = proposal_app(git_repo)

    async def help_open(pilot: Pilot) -> None:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=help_open)


def test_start_screen(git_repo: Path, snap_compare):
    app = NavApp(lambda issue: make_session(git_repo, TURNS, issue=issue), repo="repo")

    async def typed(pilot: Pilot) -> None:
        await until(pilot, lambda: type(app.screen).__name__ == "StartScreen" and app.screen.sessions_loaded)
        app.screen.query_one(TextArea).load_text("# average() is off by one\n\nIt returns 3.0 for [2, 4, 6].")
        freeze(app)

    assert snap_compare(app, terminal_size=(100, 30), run_before=typed)


def test_finish_screen(git_repo: Path, snap_compare):
    session = make_session(git_repo, TURNS, session_id=SESSION_ID)
    app = NavApp(session, repo=git_repo, auto=True)

    async def finished(pilot: Pilot) -> None:
        await until(pilot, lambda: type(app.screen).__name__ == "FinishScreen")
        freeze(app)

    assert snap_compare(app, terminal_size=(100, 30), run_before=finished)


def test_finish_screen_with_no_changes(git_repo: Path, snap_compare):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("Done.", Submit())], session_id=SESSION_ID)
    app = NavApp(session, repo=git_repo, auto=True)

    async def finished(pilot: Pilot) -> None:
        await until(pilot, lambda: type(app.screen).__name__ == "FinishScreen")
        freeze(app)

    assert snap_compare(app, terminal_size=(100, 30), run_before=finished)
