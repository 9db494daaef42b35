"""`[keymap]` ids are checked against the app's bindings: an unknown one stops navtui at start,
naming the file, the line, the id and the nearest real one."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from app.args import build_parser
from app.config import ConfigError, load_config
from app.doctor import Context, check_config
from app.keymap import binding_ids, check_keymap

NAVTUI = str(Path(sys.executable).parent / "navtui")
KEYMAP_WITH_A_TYPO = '# my keys\nmodel = "x"\n\n[keymap]\n"navtui.reject" = "n"\n"navtui.aprove" = "y"\n'


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("NAVTUI_CONFIG", str(path))
    return path


async def test_the_ids_are_those_the_running_app_and_its_help_show(git_repo: Path):
    from agent_core.actions import Submit
    from app.screens.main import MainScreen
    from app.tui import NavApp
    from tests.fixtures.tui import Watch, make_session

    ids = binding_ids()
    app = NavApp(make_session(git_repo, [("Done.", Submit())]), repo=git_repo)
    watch = Watch()
    async with app.run_test(size=(120, 40), message_hook=watch):
        await watch.until(lambda: isinstance(app.main, MainScreen), "the main screen")
        shown = {row.binding_id for row in app.main.key_rows() if row.binding_id}
    assert shown and shown <= set(ids)
    assert {"navtui.approve", "navtui.quit_app", "navtui.finish.keep", "thought_stream.toggle_turn"} <= set(ids)


def test_known_ids_pass_and_an_unknown_one_names_file_line_and_nearest(config_file: Path):
    config_file.write_text('[keymap]\n"navtui.approve" = "y"\n"navtui.finish.keep" = "K"\n')
    check_keymap(load_config(build_parser()))

    config_file.write_text(KEYMAP_WITH_A_TYPO)
    with pytest.raises(ConfigError) as raised:
        check_keymap(load_config(build_parser()))
    message = str(raised.value)
    assert message.startswith(f"{config_file}:6: [keymap] navtui.aprove: no binding has this id; "
                              "did you mean 'navtui.approve'? the ids are: ")
    assert "navtui.undo" in message


def test_doctor_fails_the_config_check_on_an_unknown_id(config_file: Path):
    config_file.write_text(KEYMAP_WITH_A_TYPO)
    [check] = check_config(Context(load_config(build_parser()), None, 1.0))
    assert check.status == "fail" and f"{config_file}:6: [keymap] navtui.aprove" in check.details[0]


def test_navtui_refuses_an_unknown_id_before_the_app_opens(config_file: Path, git_repo: Path, tmp_path: Path):
    config_file.write_text(KEYMAP_WITH_A_TYPO)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    child = pexpect.spawn(NAVTUI, [str(git_repo)], cwd=str(tmp_path), env=env, dimensions=(40, 120),
                          timeout=90)
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    shown = child.before.decode()
    assert child.exitstatus == 1, shown
    assert f"navtui: {config_file}:6: [keymap] navtui.aprove: no binding has this id" in shown
    assert "did you mean 'navtui.approve'?" in shown and "navtui.quit_app" in shown
    assert "What should the model fix" not in shown and "\x1b[?1049h" not in shown  # no screen


def test_a_dotted_keymap_key_is_found_on_its_line(config_file: Path):
    config_file.write_text('model = "x"\nkeymap."navtui.undoo" = "U"\n')
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(config_file))}:2: \[keymap\] navtui.undoo: .*did you mean 'navtui.undo'"):
        check_keymap(load_config(build_parser()))
