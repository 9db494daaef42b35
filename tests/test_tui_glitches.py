"""Pilot tests for what a user saw go wrong (issue 12, item 7), each on a real session."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from agent_core.actions import Bash, Submit
from app.screens.help import HelpScreen
from app.screens.main import MainScreen
from app.tui import NavApp
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import Watch, make_session, showing
from widgets.action_card import ActionCard
from widgets.status_bar import StatusBar
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import ThoughtStream

LONG_COMMAND = "echo " + " ".join(f"word{n}" for n in range(300))
RAW_TURN = (
    "<think>\nThe average looks off by one; listing first.\n</think>\n\nI'll list the files.\n"
    '<tool_call>\n{"name": "bash", "arguments": {"command": ' + json.dumps(LONG_COMMAND) + "}}\n</tool_call>"
)
MARKUP = ("<think>", "</think>", "<tool_call>", '"name"', '{"command"')


def consistent(main: MainScreen) -> bool:
    """The header's state word and the action card say the same thing."""
    status, card = main.query_one(StatusBar).state, main.query_one(ActionCard).state
    pairs = {"thinking": "thinking", "waiting for you": "pending", "running": "running"}
    return status not in pairs or pairs[status] == card


async def test_a_streaming_turn_shows_thought_text_never_markup_even_after_esc(git_repo: Path):
    session = make_session(git_repo, [RAW_TURN, ("Next.", Bash("ls"))], delay=0.002, chunk_size=3)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        main = app.main
        assert main is not None
        stream = main.query_one(ThoughtStream)
        await watch.until(lambda: main._split.in_action, "the model writes its action")
        assert "I'll list the files." in stream.text
        assert not any(mark in stream.text for mark in MARKUP)
        await watch.until(lambda: "writing a bash action" in str(main.query_one("#card-command").render()),
                          "the card names the action being written")
        assert main.query_one(StatusBar).state == "thinking" and consistent(main)
        await pilot.press("escape")
        await watch.until(lambda: main.paused and not stream.rendering, "stopped")
        assert not any(mark in stream.text for mark in MARKUP)
        shown = "\n".join(turn.source for turn in stream.query("TurnText"))
        assert "average looks off by one" in shown and not any(mark in shown for mark in MARKUP)


async def test_header_and_card_agree_through_a_step_and_replay_shows_no_tok_s(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("sleep 3")), ("Done.", Submit())],
                           delay=0.01, chunk_size=2)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        main = app.main
        assert main is not None
        status = main.query_one(StatusBar)
        await watch.until(lambda: main.generating, "thinking")
        assert status.state == "thinking" and consistent(main)
        await watch.until(lambda: main.pending is not None, "proposal 1")
        assert status.state == "waiting for you" and consistent(main)
        await pilot.press("a")
        assert status.state == "running" and consistent(main)
        await watch.until(lambda: main.pending is not None and main.pending.index == 2, "proposal 2")
        assert status.state == "waiting for you" and consistent(main)
        assert status.tokens_per_second == 0 and "tok/s" not in status.render().plain


async def test_bindings_are_refreshed_when_state_changes_not_per_token(git_repo: Path):
    thought = " ".join(hashlib.sha1(str(n).encode()).hexdigest()[:7] for n in range(150))  # no loop
    session = make_session(git_repo, [(thought, Bash("ls"))], delay=0.002, chunk_size=2)
    app, watch = NavApp(session, repo=git_repo), Watch()
    refreshes: list[object] = []
    async with app.run_test(size=(120, 36), message_hook=watch):
        main = app.main
        assert main is not None
        main.bindings_updated_signal.subscribe(main, refreshes.append)
        await watch.until(lambda: main.pending is not None, "proposal 1")
        wakes = sum(1 for m in watch.seen if type(m).__name__ == "SessionWake")
    assert wakes > 20  # the turn streamed in many wakes...
    assert len(refreshes) <= 6  # ...but the Footer was refreshed only when the state changed


async def test_the_footer_names_what_each_key_does(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("More.", Bash("pwd"))])
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: app.main is not None and app.main.pending is not None, "proposal 1")

        def shown() -> dict[str, str]:
            return {key.key_display: key.description for key in app.main.query_one(Footer).query(FooterKey)}

        # The Footer is rebuilt once per frame after the screen's state changes.
        await watch.until(lambda: "a" in shown(), "the Footer offers a")
        await pilot.pause()
        keys = shown()
        assert keys["a"] == "Approve" and keys["r"] == "Reject" and keys["e"] == "Edit"
        assert keys["A"] == "Always"


async def test_the_step_sidebar_widens_with_the_terminal(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("More.", Bash("pwd"))])
    widths = {}
    for size in ((120, 36), (220, 50)):
        app, watch = NavApp(session if size == (120, 36) else make_session(git_repo, [("L.", Bash("ls"))]),
                            repo=git_repo), Watch()
        async with app.run_test(size=size, message_hook=watch) as pilot:
            await watch.until(lambda: app.main is not None and app.main.pending is not None, "proposal")
            await pilot.pause()
            widths[size[0]] = app.main.query_one(StepTimeline).outer_size.width
    assert widths == {120: 28, 220: 44}


async def test_help_at_80x24_shows_every_key_and_says_esc_closes_it(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("More.", Bash("pwd"))])
    async with running_app(session, git_repo, size=(80, 24), wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: app.main is not None and app.main.pending is not None, "proposal 1")
        await pilot.press("question_mark")
        await watch.until(lambda: showing(app, HelpScreen), "help")
        await pilot.pause()
        assert "esc closes" in str(app.screen.query_one("#help-title").render())
        table = app.screen.query_one("#help-table")
        rows = app.main.key_rows()
        assert table.region.bottom <= 24 and table.region.height == (len(rows) + 1) // 2
        shown = str(table.render())  # every key, in two columns when one line each won't fit
        assert all(f"{row.keys}  " in shown for row in rows), shown
        await pilot.press("escape")
        await watch.until(lambda: app.screen is app.main, "help closed")


async def test_the_resume_hint_quotes_a_path_with_spaces(tmp_path: Path):
    from tests.fixtures.repos import BUGGY_PROJECT, make_repo

    repo = make_repo(tmp_path / "my repo", BUGGY_PROJECT)
    session = make_session(repo, [("Look.", Bash("ls")), ("More.", Bash("pwd"))])
    async with running_app(session, repo, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: app.main is not None and app.main.pending is not None, "proposal 1")
        hint = app.main.quit_explanation()
    assert f"navtui --resume {session.id} {shlex.quote(str(repo))}\n" in hint
    assert shlex.split(hint.splitlines()[2])[-1] == str(repo)


async def test_the_start_screen_is_usable_before_the_session_list_arrives():
    import threading
    from datetime import datetime

    from textual.app import App

    from agent_core.trajectory import SessionSummary
    from app.screens.start import StartScreen

    release = threading.Event()

    def summary(n: int) -> SessionSummary:
        return SessionSummary(id=f"2026-{n:03d}", started=datetime(2026, 1, 1), issue=f"issue {n}",
                              steps=n, status="quit", path=Path(f"{n}.jsonl"))

    def slow_list():
        assert release.wait(30)
        yield from (summary(n) for n in range(12))

    screen = StartScreen("repo", slow_list)

    class Harness(App[None]):
        def on_mount(self) -> None:
            self.push_screen(screen)

    async with Harness().run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert screen.is_mounted and screen.focused is screen.query_one("#issue-editor")
        assert not screen.query_one("#start-sessions").display and not screen.sessions_loaded
        await pilot.press(*"typing works")
        assert screen.query_one("#issue-editor").text == "typing works"
        release.set()
        while not screen.sessions_loaded:
            await pilot.pause(0.01)
        options = screen.query_one("#sessions")
        assert options.option_count == 12 and screen.query_one("#start-sessions").display
        assert options.get_option_at_index(0).id == "2026-000"


async def test_a_server_that_is_down_is_reported_once_naming_the_model_asked_for(git_repo: Path):
    from agent_core.backends.openai_compat import OpenAIBackend
    from agent_core.executor import Executor
    from agent_core.session import Session, SessionConfig
    from agent_core.workspace import Workspace
    from app.screens.finish import FinishScreen
    from tests.fixtures.servers import closed_port_url

    session = Session(workspace=Workspace.open(git_repo), executor=Executor(git_repo),
                      backend=OpenAIBackend(closed_port_url(), "my-model", backoff=0.01),
                      issue="# x", config=SessionConfig("toolcall"))
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        notes = [str(note.render()) for note in app.main.query(".note")]
    said = [note for note in notes if "cannot connect" in note]
    assert len(said) == 1 and "my-model" in said[0] and "navigator-8b" not in said[0]
    assert "Session finished (error)." in notes


def test_stream_split_passes_thought_and_holds_back_the_action_in_every_dialect():
    import random

    from agent_core.actions import StrReplaceEditor
    from agent_core.formats import render
    from app.stream_split import StreamSplit

    action = StrReplaceEditor(command="str_replace", path="a.py", old_str="x <b>", new_str="y")
    thought = "The `Action:` word mid-line and <b>tags</b> stay; a think block does not."
    rng = random.Random(7)
    for dialect in ("toolcall", "xml", "text"):
        raw = render(action if dialect != "text" else Bash("ls -la"), dialect, thought)
        if dialect == "toolcall":
            raw = "<think>\n" + raw.replace("\n<tool_call>", "\n</think>\n<tool_call>", 1)
        for splitter_dialect in (dialect, "auto"):
            for _ in range(20):
                split, shown, at = StreamSplit(splitter_dialect), "", 0
                while at < len(raw):
                    size = rng.randint(1, 9)
                    shown += split.feed(raw[at : at + size])
                    at += size
                assert shown.strip() == thought, (dialect, splitter_dialect, shown)
                assert split.action_name in ("str_replace_editor", "bash")


def test_the_stream_markers_are_the_dialects_own():
    """Each dialect states how its action opens in a stream; the splitter knows no other."""
    from agent_core.formats import DIALECTS, get_dialect
    from app.stream_split import StreamSplit

    for name in DIALECTS:
        dialect = get_dialect(name)
        assert dialect.action_markers and dialect.action_name, name
        split = StreamSplit(name)
        assert split.markers == dialect.action_markers
        assert split.feed(f"Looking.\n{dialect.render(Bash('ls'))}").strip() == "Looking."
        assert split.action_name == "bash"
    every = StreamSplit("auto").markers
    assert set(every) == {m for name in DIALECTS for m in get_dialect(name).action_markers}
