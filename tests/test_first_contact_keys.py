"""The keys a new user tries in the first hour, pressed as they press them (Pilot, or a real
terminal in tmux where the key's path through the terminal matters): ctrl+e in the edit
dialog, the output pane, `d`, the timeline and `w`, `s`, the demo with the config file, a keymap
clash."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from agent_core.actions import Bash
from app.args import build_parser
from app.config import ConfigError, load_config
from app.doctor import Context, check_config
from app.keymap import check_keymap
from tests.fixtures.repos import git
from tests.fixtures.running_app import main_screen, running_app, waiting_on
from tests.fixtures.tmux import TmuxPane
from tests.fixtures.tui import make_session, showing
from tests.test_session import write_script
from widgets.lower_pane import OUTPUT, SESSION_DIFF, STEP_DIFF, LowerPane
from widgets.output_log import OutputLog
from widgets.step_timeline import StepTimeline

NAVTUI = str(Path(sys.executable).parent / "navtui")
CLASH = '[keymap]\n"navtui.approve" = "r"\n'


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("NAVTUI_CONFIG", str(path))
    return path


def test_ctrl_e_in_the_edit_dialog_opens_editor(git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane):
    """The key, in a real terminal: the text area's own ctrl+e (end of line) took it first,
    although the dialog says ctrl+e opens $EDITOR."""
    script = write_script(tmp_path / "s.jsonl", ["Thought: write it\nAction: bash echo wrong > out.txt",
                                                 "Thought: done\nAction: bash ls"])
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i s/wrong/right/ "$1"\necho edited > "$(dirname "$0")/ran"\n')
    editor.chmod(0o755)
    tmux_pane.start_navtui("--script", str(script), "--issue", "write it", str(git_repo),
                           cwd=tmp_path, env={"EDITOR": str(editor), "VISUAL": ""})
    tmux_pane.wait_for("Approve")
    tmux_pane.send("e")
    tmux_pane.wait_for("ctrl+e opens $EDITOR")
    tmux_pane.send("C-e")
    tmux_pane.wait_for("echo right > out.txt")
    assert (tmp_path / "ran").read_text() == "edited\n"
    tmux_pane.send("C-s")
    tmux_pane.wait_for("╭─ Step 2")
    assert (git_repo / "out.txt").read_text() == "right\n"
    tmux_pane.send("q")
    tmux_pane.wait_for("Quit navtui?")
    tmux_pane.send("y")
    assert tmux_pane.exit_status() == 3


async def test_an_editor_that_cannot_start_is_said_in_the_dialog(git_repo: Path, monkeypatch):
    from app.screens.edit import EditScreen

    monkeypatch.setenv("VISUAL", "no-such-editor-here")
    session = make_session(git_repo, [("Look.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("e")
        await watch.until(lambda: showing(app, EditScreen), "edit dialog")
        await pilot.press("ctrl+e")
        error = str(app.screen.query_one("#edit-error").render())
        assert error.startswith("$EDITOR: ") and "edit the action here" in error
        assert isinstance(app.screen, EditScreen)  # nothing is lost: the dialog stays


async def test_the_output_pane_keeps_blank_lines(git_repo: Path):
    session = make_session(git_repo, [("Print.", Bash("printf 'one\\n\\n\\ntwo\\n'")),
                                      ("Next.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        lines = [line.strip() for line in main_screen(app).query_one(OutputLog).lines]
        assert lines[-4:] == ["one", "", "", "two"]


async def test_d_goes_round_output_step_diff_session_diff(git_repo: Path):
    session = make_session(git_repo, [("Write.", Bash("echo x > x.txt")), ("Next.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        lower = main_screen(app).query_one(LowerPane)
        seen = [lower.active]
        for _ in range(3):
            await pilot.press("d")
            seen.append(lower.active)
        assert seen == [OUTPUT, STEP_DIFF, SESSION_DIFF, OUTPUT]
        assert main_screen(app).query_one(OutputLog).display


async def test_the_timeline_follows_the_newest_step_and_s_focuses_it_for_w(git_repo: Path):
    """The highlight stayed on step 1, so `w` offered to rewind to it whatever the user looked
    at; now it follows the newest step, `s` focuses the timeline and its arrows choose."""
    from app.screens.confirm import ConfirmScreen

    turns = [(f"Step {n}.", Bash(f"echo {n} > f{n}.txt")) for n in range(1, 7)]
    session = make_session(git_repo, turns)
    async with running_app(session, git_repo) as (app, pilot, watch):
        for index in (1, 2, 3):
            await watch.until(lambda: waiting_on(app, index), f"proposal {index}")
            await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 4), "proposal 4")
        main = main_screen(app)
        timeline = main.query_one(StepTimeline)
        assert timeline.highlighted_step == 4  # the newest step, pending: nothing to rewind to
        assert not main.check_action("rewind", ())
        assert timeline.has_focus  # (shown and focused from the start at this width)
        await pilot.press("up", "up")
        assert timeline.highlighted_step == 2
        await pilot.press("w")
        await watch.until(lambda: showing(app, ConfirmScreen), "rewind asks first")
        assert app.screen.explanation.startswith("Step 3 is undone")
        await pilot.press("y")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3 after the rewind")
        assert (git_repo / "f2.txt").exists() and not (git_repo / "f3.txt").exists()
        await pilot.press("s")  # on the focused timeline: hide it
        await pilot.pause()
        assert not timeline.has_focus and not timeline.display
        await pilot.press("s")  # hidden: show it, focused
        await pilot.pause()
        assert timeline.has_focus and timeline.display


async def test_s_shows_the_hidden_timeline_focused_at_80_columns(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls"))])
    async with running_app(session, git_repo, size=(80, 24)) as (app, pilot, watch):
        timeline = main_screen(app).query_one(StepTimeline)
        assert not timeline.display
        await pilot.press("s")
        await pilot.pause()
        assert timeline.display and timeline.has_focus
        await pilot.press("s")
        await pilot.pause()
        assert not timeline.display and not timeline.has_focus


def test_the_demo_reads_the_config_file(config_file: Path, tmp_path: Path, tmux_pane: TmuxPane):
    config_file.write_text('[keymap]\n"navtui.approve" = "y"\n\n[theme]\nname = "navtui-light"\n')
    tmux_pane.start_navtui("demo", "--fast", "--dir", str(tmp_path / "demo"), cwd=tmp_path,
                           env={"NAVTUI_CONFIG": str(config_file)})
    shown = tmux_pane.wait_for("Approve")
    assert "y Approve" in tmux_pane.lines()[-1], shown
    tmux_pane.send("q")
    tmux_pane.wait_for("Quit navtui?")
    tmux_pane.send("y")
    assert tmux_pane.exit_status() == 3


def test_a_key_given_to_two_bindings_is_refused_naming_both(config_file: Path):
    config_file.write_text(CLASH)
    with pytest.raises(ConfigError) as refused:
        check_keymap(load_config(build_parser()))
    assert str(refused.value) == (
        f"{config_file}:2: [keymap] navtui.approve: 'r' is already navtui.reject's key on the "
        "main screen, which would be left without it; give navtui.reject another key as well, "
        'e.g. "navtui.reject" = "KEY", or give navtui.approve a key nothing else there has')
    config_file.write_text('[keymap]\n"navtui.approve" = "r"\n"navtui.reject" = "a"\n')
    check_keymap(load_config(build_parser()))  # a swap leaves each its own key
    config_file.write_text('[keymap]\n"navtui.edit.save" = "ctrl+e"\n')
    with pytest.raises(ConfigError, match="'ctrl\\+e' is already navtui.edit.external's key on the edit screen"):
        check_keymap(load_config(build_parser()))


def test_doctor_fails_on_a_keymap_clash(config_file: Path):
    config_file.write_text(CLASH)
    [check] = check_config(Context(load_config(build_parser()), None, 1.0))
    assert check.status == "fail" and "'r' is already navtui.reject's key" in check.details[0]


@pytest.mark.parametrize("argv", [["{repo}"], ["demo", "--fast", "--dir", "{demo}"]])
def test_navtui_and_the_demo_refuse_a_clash_before_the_app_opens(argv, config_file: Path,
                                                                 git_repo: Path, tmp_path: Path):
    config_file.write_text(CLASH)
    env = {**os.environ, "TERM": "xterm-256color"}
    args = [a.format(repo=git_repo, demo=tmp_path / "demo") for a in argv]
    child = pexpect.spawn(NAVTUI, args, cwd=str(tmp_path), env=env, dimensions=(40, 120), timeout=90)
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    shown = child.before.decode()
    assert child.exitstatus == 1, shown
    assert "[keymap] navtui.approve: 'r' is already navtui.reject's key" in shown
    assert "\x1b[?1049h" not in shown  # no screen opened
    assert git(git_repo, "status", "--porcelain") == ""


async def test_after_a_dialog_at_80_columns_the_hidden_timeline_has_no_focus_and_s_gives_it(git_repo: Path):
    """A dialog closing gave the focus back to the first focusable widget: the hidden timeline,
    so enter opened a step nobody saw, and `s` then hid... nothing and left it unfocused."""
    from app.screens.reject import RejectScreen
    from app.screens.step_detail import StepDetailScreen

    session = make_session(git_repo, [("Look.", Bash("ls")), ("More.", Bash("pwd")), ("Again.", Bash("ls -a"))])
    async with running_app(session, git_repo, size=(80, 24)) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("r")
        await watch.until(lambda: showing(app, RejectScreen), "reject dialog")
        await pilot.press("enter")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3")
        timeline = main_screen(app).query_one(StepTimeline)
        assert not timeline.display and not timeline.has_focus
        await pilot.press("enter")
        await pilot.pause()
        assert not showing(app, StepDetailScreen)
        await pilot.press("s")
        await pilot.pause()
        assert timeline.display and timeline.has_focus
        await pilot.press("up", "up")
        assert timeline.highlighted_step == 1 and main_screen(app).check_action("rewind", ())
