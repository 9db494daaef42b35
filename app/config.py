"""navtui's config file: defaults for the command line, allow rules, keymap and theme.

    # ~/.config/navtui/config.toml (platformdirs' user config dir; NAVTUI_CONFIG overrides it)
    model = "navigator-8b"          # any long flag, `-` written `_`: --load-in-4bit -> load_in_4bit
    load_in_4bit = true
    max_steps = 30

    [rules]                         # approved without asking, in every repository
    allow_kinds = ["read", "search", "view"]
    allow_prefixes = ["git status", "ls"]

    [keymap]                        # binding id = key(s), applied with Textual's set_keymap
    "navtui.approve" = "y"

    [theme]
    name = "navtui-light"

The valid top-level keys are read off the argparse parser (every long option), so a new flag is a
new key with no code here; values are checked by the option's own `type` and `choices`. Flags on
the command line win over the file. Only `app/` reads this file; the core gets dataclasses.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_ENV = "NAVTUI_CONFIG"
TABLES = ("keymap", "rules", "theme")
RULE_KEYS = ("allow_kinds", "allow_prefixes")
# Options that are no settings: they act and exit.
NOT_SETTINGS = frozenset({"help", "version"})


class ConfigError(Exception):
    """The config file cannot be used; the message names the file, line and key."""


@dataclass
class AllowRules:
    """What is approved without asking: action kinds and bash command prefixes."""

    allow_kinds: list[str] = field(default_factory=list)
    allow_prefixes: list[str] = field(default_factory=list)


@dataclass
class Config:
    """A validated config file (all empty when there is none)."""

    path: Path
    exists: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # argparse dest -> converted value
    keymap: dict[str, str] = field(default_factory=dict)
    rules: AllowRules = field(default_factory=AllowRules)
    theme: str | None = None


def config_path() -> Path:
    """`$NAVTUI_CONFIG`, else `navtui/config.toml` in the platform's user config directory."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_config_path("navtui") / "config.toml"


# --- reading --------------------------------------------------------------------------------


def settings_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Config key -> argparse action, for every long option of `parser`."""
    settings: dict[str, argparse.Action] = {}
    for action in parser._actions:  # argparse has no public list of its actions
        if action.dest in NOT_SETTINGS:
            continue
        for option in action.option_strings:
            negative = isinstance(action, argparse.BooleanOptionalAction) and option.startswith("--no-")
            if option.startswith("--") and not negative:  # `x = false` says --no-x
                settings[option[2:].replace("-", "_")] = action
    return settings


def load_config(
    parser: argparse.ArgumentParser,
    path: Path | None = None,
    *,
    also: tuple[argparse.ArgumentParser, ...] = (),
) -> Config:
    """Read and check the config file against the options of `parser` (and of `also`: a
    subcommand accepts every setting of the main command); ConfigError says what is wrong."""
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the config file {path}: {error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    settings: dict[str, argparse.Action] = {}
    for each in (*also, parser):
        settings.update(settings_of(each))
    return _check(data, text, path, settings)


def _check(data: dict[str, Any], text: str, path: Path, settings: dict[str, argparse.Action]) -> Config:
    config = Config(path, exists=True)

    def fail(table: str | None, key: str, message: str) -> ConfigError:
        line = line_of(text, table, key)
        where = f"{path}:{line}" if line else str(path)
        name = f"[{table}] {key}" if table else key
        return ConfigError(f"{where}: {name}: {message}")

    for key, value in data.items():
        if key in TABLES:
            if not isinstance(value, dict):
                raise fail(None, key, f"must be a table: write [{key}] on its own line")
            continue
        action = settings.get(key)
        if action is None:
            known = ", ".join(sorted(settings))
            raise fail(None, key, f"unknown setting; the settings are the long flags: {known}, "
                                  f"and the tables [{'], ['.join(TABLES)}]")
        try:
            config.options[action.dest] = convert(action, value)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as error:
            raise fail(None, key, str(error)) from None

    keymap = data.get("keymap", {})
    for binding, keys in keymap.items():
        if not isinstance(keys, str) or not keys.strip():
            raise fail("keymap", binding, 'must be a key string, e.g. "y" or "ctrl+y,f5"')
    config.keymap = dict(keymap)

    rules = data.get("rules", {})
    for key, value in rules.items():
        if key not in RULE_KEYS:
            raise fail("rules", key, f"unknown rule list; use {' or '.join(RULE_KEYS)}")
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise fail("rules", key, 'must be a list of strings, e.g. ["git status", "ls"]')
    config.rules = AllowRules(list(rules.get("allow_kinds", [])),
                              list(rules.get("allow_prefixes", [])))

    theme = data.get("theme", {})
    for key, value in theme.items():
        if key != "name":
            raise fail("theme", key, 'unknown theme setting; use name = "navtui-light"')
        if value not in theme_names():
            raise fail("theme", key, f"unknown theme {value!r}; choose one of "
                                     f"{', '.join(theme_names())}")
    config.theme = theme.get("name")
    return config


def convert(action: argparse.Action, value: Any) -> Any:
    """`value` from the file as the option would have parsed it on the command line."""
    if action.nargs == 0:  # a switch: --load-in-4bit
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {_toml(value)}")
        return value
    if action.nargs in ("*", "+") or isinstance(action.nargs, int) or isinstance(
        action, argparse._AppendAction  # a repeatable flag: --writable A --writable B
    ):
        if not isinstance(value, list):
            raise ValueError(f"must be a list, e.g. [{_toml(value)}]")
        return [_convert_one(action, item) for item in value]
    return _convert_one(action, value)


def _convert_one(action: argparse.Action, value: Any) -> Any:
    if isinstance(value, (bool, list, dict)) or not isinstance(value, (str, int, float)):
        raise ValueError(f"must be {'a number' if action.type in (int, float) else 'a string'}, "
                         f"got {_toml(value)}")
    if action.type is None and not isinstance(value, str):
        raise ValueError(f'must be a string: write "{value}"')
    converted = action.type(str(value)) if callable(action.type) else value
    if action.choices is not None and converted not in action.choices:
        raise ValueError(f"must be one of {', '.join(map(str, action.choices))}, got {_toml(value)}")
    return converted


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, (str, list, dict)) else str(value)


def line_of(text: str, table: str | None, key: str) -> int | None:
    """The line (1-based) where `key` is set in `[table]` (None: top level), if it can be found."""
    current = None
    key_pattern = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1).strip("\"'")
            if table is None and current == key:
                return number
        elif current == table and key_pattern.match(line):
            return number
    return None


def theme_names() -> list[str]:
    """navtui's own themes and Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    return ["navtui-dark", "navtui-light", *BUILTIN_THEMES]


# --- applying -------------------------------------------------------------------------------


def explicit_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The dests of the options `argv` gives on the command line (not their defaults)."""
    defaults = {action.dest: action.default for action in parser._actions}
    try:
        for action in parser._actions:
            action.default = argparse.SUPPRESS
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):  # the real parse speaks
            given, _ = parser.parse_known_args(argv)
    except SystemExit:
        return set()
    finally:
        for action in parser._actions:
            action.default = defaults[action.dest]
    return set(vars(given))


def apply_config(
    parser: argparse.ArgumentParser, config: Config, argv: list[str], *, skip: frozenset[str] = frozenset()
) -> None:
    """Make the file's values `parser`'s defaults, so flags win over them.

    A flag given on the command line also clears the file's value for the options it excludes
    (`--load-in-8bit` beats `load_in_4bit = true`); options in `skip` keep their built-in default.
    """
    known = {action.dest for action in parser._actions}
    given = explicit_options(parser, argv)
    excluded = {
        other.dest
        for group in parser._mutually_exclusive_groups
        if any(action.dest in given for action in group._group_actions)
        for other in group._group_actions
        if other.dest not in given
    }
    parser.set_defaults(**{
        dest: value for dest, value in config.options.items()
        if dest in known and dest not in excluded and dest not in skip
    })


def configure(
    parser: argparse.ArgumentParser,
    argv: list[str],
    *,
    logged_backend: tuple[str, ...] = (),
    also: tuple[argparse.ArgumentParser, ...] = (),
) -> Config:
    """Load the config file and make it `parser`'s defaults (settings only `also` has are
    valid but not applied). With `--resume`, the options in `logged_backend` are left to the
    logged session unless given as flags."""
    config = load_config(parser, also=also)
    resuming = "resume" in explicit_options(parser, argv)
    apply_config(parser, config, argv, skip=frozenset(logged_backend) if resuming else frozenset())
    return config


# --- rules written back from the app ----------------------------------------------------------


def load_rules(path: Path | None = None) -> AllowRules:
    """The `[rules]` of the config file (empty without one); ConfigError when it is broken."""
    from app.args import batch_parser, build_parser

    return load_config(build_parser(), path, also=(batch_parser(),)).rules


def save_rule(*, kind: str | None = None, prefix: str | None = None, path: Path | None = None) -> Path:
    """Add an allow rule (an action kind or a bash prefix) to the file's `[rules]`; returns the path.

    The rest of the file is kept as written; the `[rules]` table is rewritten.
    """
    path = path or config_path()
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    rules = load_rules(path)
    if kind and kind not in rules.allow_kinds:
        rules.allow_kinds.append(kind)
    if prefix and prefix.strip() and prefix not in rules.allow_prefixes:
        rules.allow_prefixes.append(prefix)
    new_text = _with_rules_table(text, rules)
    tomllib.loads(new_text)  # never write a file navtui cannot read back
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(new_text, encoding="utf-8")
    temporary.replace(path)
    return path


def save_allow_rule(prefix: str) -> str:
    """Save a bash prefix rule for every repository; says where, or why it could not."""
    try:
        return f"saved in {save_rule(prefix=prefix)}"
    except (ConfigError, OSError, tomllib.TOMLDecodeError) as error:
        return f"not saved: {error}"


def _with_rules_table(text: str, rules: AllowRules) -> str:
    table = "[rules]\n" + "".join(
        f"{key} = {json.dumps(getattr(rules, key), ensure_ascii=False)}\n" for key in RULE_KEYS
        if getattr(rules, key)
    )
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"^\s*\[\s*rules\s*\]", line)), None)
    if start is None:
        separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return text + separator + table
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\s*\[", lines[i])), len(lines))
    return "".join(lines[:start]) + table + ("\n" if end < len(lines) else "") + "".join(lines[end:])


# --- `navtui config show|path|edit` ------------------------------------------------------------


def render(config: Config, parser: argparse.ArgumentParser) -> str:
    """The settings in effect from the file, as TOML."""
    keys = {action.dest: key for key, action in settings_of(parser).items()}
    lines = [f"{keys.get(dest, dest)} = {_toml(value)}" for dest, value in config.options.items()]
    rules = [f"{key} = {_toml(getattr(config.rules, key))}" for key in RULE_KEYS
             if getattr(config.rules, key)]
    for table, entries in (
        ("rules", rules),
        ("keymap", [f"{json.dumps(binding)} = {json.dumps(keys_)}" for binding, keys_ in config.keymap.items()]),
        ("theme", [f"name = {json.dumps(config.theme)}"] if config.theme else []),
    ):
        if entries:
            lines += ["", f"[{table}]", *entries]
    return "\n".join(lines) + "\n"


def template(parser: argparse.ArgumentParser) -> str:
    """A new config file: every setting commented out, with its default and help."""
    lines = ["# navtui settings: a flag on the command line wins over its setting here.", ""]
    for key, action in settings_of(parser).items():
        if action.dest == "repo":
            continue
        default = action.default if action.default not in (None, argparse.SUPPRESS) else ""
        value = _toml(default) if default != "" else '""'
        summary = " ".join((action.help or "").split())
        lines.append(f"# {key} = {value}" + (f"    # {summary}" if summary else ""))
    lines += ["", "# [rules]", '# allow_kinds = ["read", "search", "view"]',
              '# allow_prefixes = ["git status", "ls"]', "", "# [keymap]",
              '# "navtui.approve" = "y"', "", "# [theme]", '# name = "navtui-light"', ""]
    return "\n".join(lines)


def edit(parser: argparse.ArgumentParser, path: Path | None = None) -> Path:
    """Open the config file in $VISUAL / $EDITOR (created from `template` when missing)."""
    import shlex
    import subprocess

    path = path or config_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template(parser), encoding="utf-8")
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        subprocess.run([*shlex.split(editor), str(path)], check=False)
    except OSError as error:
        raise ConfigError(f"cannot start the editor {editor!r} ({error.strerror or error}): set "
                          f"$EDITOR, or edit {path} yourself") from None
    return path
