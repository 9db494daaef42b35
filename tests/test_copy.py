"""`c` copies what has the focus as plain text: OSC 52 to the terminal, or a file when the
terminal cannot take it (Pilot per focus, the bytes a real terminal receives, tmux's buffer)."""

from __future__ import annotations

import base64
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_core.actions import Bash
from agent_core.sanitize import plain_copy
from app.clipboard import OSC52_LIMIT, fallback_path, osc52, terminal_refusal
from tests.fixtures.running_app import main_screen, running_app, waiting_on
from tests.fixtures.tmux import TmuxPane
from tests.fixtures.tui import make_session
from tests.test_session import write_script
from widgets.diff_view import DiffView
from widgets.output_log import OutputLog
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import FoldedTurn

COLOURED = "printf '\\033[31mred\\033[0m plain\\r\\nhalf\\rdone\\n'"
TURNS = [("Colour it.", Bash(COLOURED)), ("Write.", Bash("echo new > made.txt")), ("Look.", Bash("ls"))]


def last_toast(app) -> str:
    return list(app._notifications)[-1].message


def test_plain_copy_strips_escapes_and_keeps_what_a_terminal_leaves():
    text = "\x1b[1;31mred\x1b[0m\r\n50%\r100%\n\x1b]0;title\x07x\x1b(By\x9b2Jz\tend\x00"
    assert plain_copy(text) == "red\n100%\nxyz\tend"


def test_the_osc52_sequence_is_base64_of_the_utf8_text():
    assert osc52("héllo") == "\x1b]52;c;" + base64.b64encode("héllo".encode()).decode() + "\a"


def test_auto_refuses_terminals_that_cannot_take_osc52():
    xterm = {"TERM": "xterm-256color"}
    assert terminal_refusal("x", xterm) == ""
    assert "TERM=dumb" in terminal_refusal("x", {"TERM": "dumb"})
    assert "TERM=unset" in terminal_refusal("x", {})
    assert "macOS Terminal" in terminal_refusal("x", {**xterm, "TERM_PROGRAM": "Apple_Terminal"})
    in_tmux = {**xterm, "TMUX": "/tmp/sock,1,0"}
    assert "set-clipboard is external" in terminal_refusal("x", in_tmux, lambda: "external")
    assert terminal_refusal("x", in_tmux, lambda: "on") == ""
    assert "too many" in terminal_refusal("x" * OSC52_LIMIT, xterm)


async def test_c_copies_the_command_the_output_the_diff_and_the_step(git_repo: Path):
    session = make_session(git_repo, TURNS)
    async with running_app(session, git_repo, clipboard="osc52") as (app, pilot, watch):
        main = main_screen(app)
        await pilot.press("c")  # a proposal on the card (the timeline's pending step has no record)
        assert app.clipboard == COLOURED
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3")

        main.set_focus(main.query_one(OutputLog))
        await pilot.press("c")
        assert app.clipboard == ""  # step 2's output: echo into a file prints nothing
        assert "the output of step 2" in last_toast(app)

        await pilot.press("d")  # the step diff
        main.set_focus(main.query_one(DiffView))
        await pilot.press("c")
        assert app.clipboard.startswith("diff --git a/made.txt b/made.txt") and "+new" in app.clipboard

        timeline = main.query_one(StepTimeline)
        main.set_focus(timeline)
        await pilot.press("up", "up")
        assert timeline.highlighted_step == 1
        await pilot.press("c")
        copied = app.clipboard
        assert copied.startswith("Step 1: bash printf")
        assert "Colour it." in copied and COLOURED in copied
        assert "red plain\nhalf\ndone\n" in copied and "\x1b" not in copied

        folded = main.query(FoldedTurn).first()  # step 1's thought, folded after two newer turns
        folded.focus()
        await pilot.press("c")
        assert app.clipboard == folded.full_text == "Colour it."


async def test_c_copies_the_output_without_escape_sequences(git_repo: Path):
    session = make_session(git_repo, TURNS)
    async with running_app(session, git_repo, clipboard="osc52") as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        main = main_screen(app)
        main.set_focus(main.query_one(OutputLog))
        await pilot.press("c")
        assert app.clipboard == "red plain\nhalf\ndone\n"  # (the executor turned the lone \\r into a line break)


async def test_c_copies_a_step_in_detail(git_repo: Path):
    from app.screens.step_detail import StepDetailScreen
    from tests.fixtures.tui import showing

    session = make_session(git_repo, TURNS)
    async with running_app(session, git_repo, clipboard="osc52") as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        main = main_screen(app)
        timeline = main.query_one(StepTimeline)
        timeline.focus()
        timeline.highlight_step(1)
        await pilot.press("enter")
        await watch.until(lambda: showing(app, StepDetailScreen), "step detail")
        await pilot.press("c")
        assert app.clipboard.startswith("Step 1: bash printf") and "red plain\nhalf\ndone" in app.clipboard
        await pilot.press("escape")
        await watch.until(lambda: app.screen is main, "back")


async def test_a_terminal_without_osc52_gets_a_file_and_the_toast_says_where(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("TMUX", raising=False)
    session = make_session(git_repo, TURNS)
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("c")
        await pilot.pause()
        path = fallback_path()
        assert path.read_text(encoding="utf-8") == COLOURED
        said = last_toast(app)
        assert str(path) in said and "TERM=dumb" in said
        assert app.clipboard == ""  # nothing was sent to the terminal


async def test_method_file_in_the_config_always_writes_the_file(git_repo: Path, monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("TMUX", raising=False)
    session = make_session(git_repo, TURNS)
    async with running_app(session, git_repo, clipboard="file") as (app, pilot, watch):
        await pilot.press("c")
        await pilot.pause()
        assert fallback_path().read_text(encoding="utf-8") == COLOURED
        assert 'method is "file"' in last_toast(app)


def _read_until(fd: int, wanted: bytes, timeout: float = 60.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted not in seen:
        if time.monotonic() > deadline:
            raise AssertionError(f"no {wanted!r} in what the terminal got: {seen[-2000:]!r}")
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def test_the_terminal_receives_the_osc52_bytes(git_repo: Path, tmp_path: Path):
    """navtui on a real pseudo-terminal: `c` writes ESC ] 52 ; c ; base64 BEL to it."""
    import fcntl
    import pty
    import struct
    import termios

    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash ls -la"])
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TERM_PROGRAM")}
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--script", str(script), "--issue", "look", str(git_repo)],
        stdin=terminal, stdout=terminal, stderr=terminal, cwd=tmp_path, env=env, start_new_session=True,
    )
    os.close(terminal)
    try:
        _read_until(controller, b"Approve")
        os.write(controller, b"c")
        _read_until(controller, osc52("ls -la").encode())
    finally:
        process.kill()
        process.wait(timeout=30)
        os.close(controller)


def test_in_tmux_with_set_clipboard_on_the_buffer_gets_the_text(git_repo: Path, tmp_path: Path,
                                                                tmux_pane: TmuxPane):
    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash git log --oneline -3"])
    tmux_pane.start_navtui("--script", str(script), "--issue", "look", str(git_repo), cwd=tmp_path)
    tmux_pane._tmux("set", "-g", "set-clipboard", "on")
    tmux_pane.wait_for("Approve")
    tmux_pane.send("c")
    tmux_pane.wait_for("Copied the command (20")
    assert tmux_pane._tmux("show-buffer") == "git log --oneline -3"


def test_in_tmux_with_its_default_set_clipboard_the_text_goes_to_its_buffer_directly(
    git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane
):
    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash git status"])
    state = tmp_path / "state"
    tmux_pane.start_navtui("--script", str(script), "--issue", "look", str(git_repo), cwd=tmp_path,
                           env={"XDG_STATE_HOME": str(state)})
    tmux_pane.wait_for("Approve")
    assert tmux_pane._tmux("show-options", "-sv", "set-clipboard").strip() == "external"
    tmux_pane.send("c")
    tmux_pane.wait_for("to tmux's paste")
    assert tmux_pane._tmux("show-buffer") == "git status"
    assert not (state / "navtui" / "copied.txt").exists()
