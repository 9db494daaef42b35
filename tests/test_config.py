"""The config file: keys read off the parser, checked values, flags over the file, rules, TUI."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pexpect
import pytest

from app.args import build_parser
from app.cli import parse_args
from app.compose import session_config
from app.config import (
    AllowRules,
    ConfigError,
    config_path,
    configure,
    load_config,
    load_rules,
    render,
    save_rule,
)
from app.tui import NavApp
from tests.test_session import FIX_SCRIPTS, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("NAVTUI_CONFIG", str(path))
    return path


def parse(argv: list[str]) -> argparse.Namespace:
    return parse_args(argv)


def test_the_path_is_in_the_platform_config_dir_unless_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv("NAVTUI_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_path() == tmp_path / "xdg" / "navtui" / "config.toml"
    monkeypatch.setenv("NAVTUI_CONFIG", "~/elsewhere.toml")
    assert config_path() == Path.home() / "elsewhere.toml"


def test_settings_become_defaults_and_flags_win(config_file: Path):
    config_file.write_text(
        'backend = "openai"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "navigator-8b"\n'
        "max_steps = 7\ncommand_timeout = 30\nload_in_4bit = true\ndialect = \"xml\"\n"
    )
    args = parse(["repo"])
    assert (args.backend, args.base_url, args.model) == ("openai", "http://127.0.0.1:8000/v1",
                                                          "navigator-8b")
    assert (args.max_steps, args.command_timeout, args.load_in_4bit, args.dialect) == (
        7, 30.0, True, "xml")
    flagged = parse(["--max-steps", "9", "--dialect", "text", "--load-in-8bit", "repo"])
    assert (flagged.max_steps, flagged.dialect) == (9, "text")
    assert (flagged.load_in_8bit, flagged.load_in_4bit) == (True, False)  # the flag's choice wins


def test_every_long_flag_is_a_setting_even_ones_added_later(config_file: Path):
    parser = build_parser()
    parser.add_argument("--later-choice", choices=("swesmith", "card"))
    parser.add_argument("--later-number", type=int)
    config_file.write_text('later_choice = "card"\nlater_number = 512\nmax_new_tokens = 64\n')
    configure(parser, ["repo"])
    args = parser.parse_args(["repo"])
    assert (args.later_choice, args.later_number, args.max_new_tokens) == ("card", 512, 64)
    config_file.write_text('max_steps = 3\nlater_choice = "other"\n')
    with pytest.raises(ConfigError, match=r"config.toml:2: later_choice: must be one of swesmith, card"):
        configure(parser, ["repo"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('model = "x"\n\nmax_step = 3\n', r"config.toml:3: max_step: unknown setting"),
        ("max_steps = 0\n", r"config.toml:1: max_steps: must be at least 1"),
        ('max_steps = "many"\n', r"config.toml:1: max_steps: must be a whole number, got 'many'"),
        ("load_in_4bit = 1\n", r"config.toml:1: load_in_4bit: must be true or false"),
        ("model = 3\n", r"config.toml:1: model: must be a string"),
        ('backend = "gpu"\n', r"config.toml:1: backend: must be one of hf, openai, replay"),
        ('model = "x"\nbackend = \n', r"config.toml: not valid TOML: Invalid value \(at line 2"),
        ('[rules]\nallow_kinds = "bash"\n', r"config.toml:2: \[rules\] allow_kinds: must be a list"),
        ("[rules]\nallow = []\n", r"config.toml:2: \[rules\] allow: unknown rule list"),
        ("[keymap]\n\"navtui.approve\" = 1\n", r"config.toml:2: \[keymap\] navtui.approve: must be a key"),
        ('[theme]\nname = "pink"\n', r"config.toml:2: \[theme\] name: unknown theme 'pink'"),
        ('[colours]\nx = 1\n', r"config.toml:1: colours: unknown setting"),
        ('[clipboard]\nmethod = "pbcopy"\n',
         r"config.toml:2: \[clipboard\] method: must be one of auto, osc52, file"),
        ('[clipboard]\nvia = "file"\n', r"config.toml:2: \[clipboard\] via: unknown clipboard setting"),
    ],
)
def test_bad_settings_name_the_key_and_line(config_file: Path, text: str, message: str):
    config_file.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(build_parser())


def test_the_clipboard_method_is_read_and_shown(config_file: Path):
    config_file.write_text('[clipboard]\nmethod = "file"\n')
    config = load_config(build_parser())
    assert config.clipboard == "file"
    assert '[clipboard]\nmethod = "file"' in render(config, build_parser())


def test_no_file_means_the_built_in_defaults(config_file: Path):
    config = load_config(build_parser())
    assert not config.exists and config.options == {} and config.rules == AllowRules()
    assert parse(["repo"]).max_steps == 50


def test_resume_keeps_the_logged_model_but_not_other_settings(config_file: Path):
    config_file.write_text('model = "navigator-8b"\nmax_steps = 4\n')
    args = parse(["--resume", "abc", "repo"])
    assert args.model is None and args.max_steps == 4
    assert parse(["--resume", "abc", "--model", "r2e-30b", "repo"]).model == "r2e-30b"


def test_the_cli_reports_a_broken_file_and_runs_with_a_good_one(
    config_file: Path, git_repo: Path, tmp_path: Path
):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    config_file.write_text("max_steps = -1\n")
    broken = subprocess.run([NAVTUI, "--auto", "--issue", "fix", str(git_repo)],
                            capture_output=True, text=True, timeout=120)
    assert broken.returncode == 1
    assert broken.stderr.strip() == f"navtui: {config_file}:1: max_steps: must be at least 1, got -1"

    config_file.write_text(f"script = {json.dumps(str(script))}\nmax_steps = 2\n")
    run = subprocess.run([NAVTUI, "--auto", "--issue", "fix", str(git_repo)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr  # the file's step limit stopped the file's script
    assert "2 steps" in run.stdout


def test_a_config_model_lets_plain_navtui_repo_open_the_app(
    config_file: Path, git_repo: Path, tmp_path: Path, tiny_model_dir: Path
):
    def spawn() -> pexpect.spawn:
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        return pexpect.spawn(NAVTUI, [str(git_repo)], cwd=str(tmp_path), env=env,
                             dimensions=(40, 120), timeout=90)

    without = spawn()
    without.expect(pexpect.EOF)
    without.close()
    assert without.exitstatus == 1 and b"needs --model" in without.before

    config_file.write_text(f"model = {json.dumps(str(tiny_model_dir))}\n")
    child = spawn()
    try:
        child.expect("What should the model fix")
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_session_config_takes_the_limits_from_the_file(config_file: Path, tmp_path: Path):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["xml"])
    config_file.write_text(f"script = {json.dumps(str(script))}\nmax_time = 60\ncommand_timeout = 5\n")
    config = session_config(parse(["repo"]))
    assert (config.max_time, config.command_timeout, config.dialect) == (60.0, 5.0, "xml")


def test_saved_rules_keep_the_rest_of_the_file(config_file: Path):
    original = '# my settings\nmodel = "navigator-8b"  # the small one\n\n[keymap]\n"navtui.approve" = "y"\n'
    config_file.write_text(original)
    save_rule(kind="read")
    save_rule(prefix="git status")
    save_rule(prefix="git status")  # no duplicate
    save_rule(kind="search")
    text = config_file.read_text()
    assert text.startswith(original)
    assert load_rules() == AllowRules(["read", "search"], ["git status"])
    assert tomllib.loads(text)["keymap"] == {"navtui.approve": "y"}

    config_file.write_text('[rules]\nallow_kinds = ["read"]\n\n[theme]\nname = "nord"\n')
    save_rule(prefix='say "hi"')
    assert load_rules() == AllowRules(["read"], ['say "hi"'])
    assert load_config(build_parser()).theme == "nord"


def test_save_rule_creates_the_file_and_its_folder(tmp_path: Path):
    path = tmp_path / "new" / "dir" / "config.toml"
    save_rule(kind="view", path=path)
    assert load_rules(path) == AllowRules(["view"], [])


async def test_the_app_applies_keymap_theme_and_seeds_the_rules(git_repo: Path):
    from agent_core.actions import Bash, Submit
    from app.screens.finish import FinishScreen
    from tests.fixtures.tui import Watch, make_session

    session = make_session(git_repo, [("Look.", Bash("git status")), ("Done.", Submit())])
    app = NavApp(session, repo=git_repo, theme="navtui-light", keymap={"navtui.approve": "y"},
                 allow_rules=AllowRules([], ["git status"]))
    watch = Watch()
    async with app.run_test(size=(120, 40), message_hook=watch) as pilot:
        assert app.theme == "navtui-light"
        await watch.until(lambda: app.main is not None and app.main.pending is not None
                          and app.main.pending.index == 2, "submit (git status ran on its own)")
        assert [record.index for record in session.records] == [1]
        await pilot.press("a")  # no longer approve: the keymap moved it to y
        await pilot.press("y")
        await watch.until(lambda: isinstance(app.screen, FinishScreen), "the finish screen")
        assert session.finished is not None and session.finished.reason == "submitted"


def test_without_a_config_file_the_main_command_leaves_batch_unloaded(tmp_path: Path):
    """The batch parser only checks a config file's keys: with none, start-up does not build it;
    with one, it is built from `app.args` alone (batch's runner stays unloaded either way)."""
    code = ("import sys, app.args; built = []; build = app.args.batch_parser; "
            "app.args.batch_parser = lambda: built.append(1) or build(); "
            "from app.cli import parse_args; parse_args(['repo']); "
            "print(len(built), sorted(m for m in ('app.subcommands', 'agent_core.batch') if m in sys.modules))")
    env = {**os.environ, "NAVTUI_CONFIG": str(tmp_path / "none.toml")}
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "0 []"
    (tmp_path / "none.toml").write_text("workers = 3\n")  # a batch setting: checked, so built
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "1 []"
    (tmp_path / "none.toml").write_text('workers = "many"\n')  # ... and checked by its own type
    refused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "workers: invalid literal" in refused.stderr


def test_batch_and_the_main_command_accept_each_others_settings(config_file: Path):
    from app.args import batch_parser

    config_file.write_text("workers = 3\nquiet = true\nmax_steps = 9\n")
    args = parse(["repo"])
    assert (args.quiet, args.max_steps) == (True, 9) and not hasattr(args, "workers")
    parser = batch_parser()
    configure(parser, ["instances.jsonl"], also=(build_parser(),))
    batch = parser.parse_args(["instances.jsonl"])
    assert (batch.workers, batch.max_steps) == (3, 9) and not hasattr(batch, "quiet")
    config_file.write_text("workers = \"many\"\n")
    with pytest.raises(ConfigError, match=r"config.toml:1: workers: invalid literal"):
        parse(["repo"])


HAND_WRITTEN = """\
# navtui, as I like it
model = 'navigator-8b'   # literal quotes
"max_steps" = 12

[keymap]  # my keys
"navtui.approve" = "y"   # y for yes

[rules]
# kinds first
allow_kinds = [ 'read',  # reading is fine
]
# trailing note in rules

[theme]
name = "nord"
"""


def test_a_saved_rule_changes_only_the_rule_lists(config_file: Path):
    config_file.write_text(HAND_WRITTEN)
    save_rule(prefix='git log --format="%h"')
    after_prefix = config_file.read_text()
    added = [line for line in after_prefix.splitlines() if line not in HAND_WRITTEN.splitlines()]
    assert added == ["allow_prefixes = [\"git log --format=\\\"%h\\\"\"]"]
    assert [line for line in after_prefix.splitlines() if line not in added] == HAND_WRITTEN.splitlines()

    save_rule(kind="search")
    after_kind = config_file.read_text()
    assert after_kind == after_prefix.replace("  # reading is fine\n", '  # reading is fine\n  "search",\n')
    assert load_rules() == AllowRules(["read", "search"], ['git log --format="%h"'])
    loaded = load_config(build_parser())
    assert (loaded.theme, loaded.keymap, loaded.options["max_steps"]) == ("nord", {"navtui.approve": "y"}, 12)


def test_a_rule_table_is_added_after_everything_else(config_file: Path):
    original = 'model = "navigator-8b"'  # no final newline
    config_file.write_text(original)
    save_rule(kind="view")
    assert config_file.read_text() == original + '\n\n[rules]\nallow_kinds = ["view"]\n'


def test_a_file_that_is_not_toml_is_named_with_its_line_and_left_alone(config_file: Path):
    from app.config import save_allow_rule

    broken = '# mine\nmodel = "x"\n[rules\nallow_kinds = ["read"]\n'
    config_file.write_text(broken)
    with pytest.raises(ConfigError, match=rf"{re.escape(str(config_file))}: not valid TOML: .*line 3"):
        save_rule(prefix="ls")
    message = save_allow_rule("ls")
    assert message.startswith(f"not saved: {config_file}") and "line 3" in message
    assert config_file.read_text() == broken


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('rules = { allow_kinds = ["read"] }  # inline\nmodel = "x"\n',
         'rules = { allow_kinds = ["read"], allow_prefixes = ["ls -la"]}  # inline\nmodel = "x"\n'),
        ("rules.allow_prefixes = ['git status']\n[theme]\nname = 'nord'\n",
         "rules.allow_prefixes = ['git status', \"ls -la\"]\n[theme]\nname = 'nord'\n"),
    ],
)
def test_rules_written_inline_or_dotted_stay_that_way(config_file: Path, text: str, expected: str):
    config_file.write_text(text)
    save_rule(prefix="ls -la")
    assert config_file.read_text() == expected
    assert "ls -la" in load_rules().allow_prefixes
