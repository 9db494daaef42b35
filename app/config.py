"""navtui's config file: defaults for the command line, allow rules, keymap and theme.

    # ~/.config/navtui/config.toml (platformdirs' user config dir; NAVTUI_CONFIG overrides it)
    model = "navigator-8b"          # any long flag, `-` written `_`: --load-in-4bit -> load_in_4bit
    load_in_4bit = true
    max_steps = 30

    [rules]                         # approved without asking, in every repository
    allow_kinds = ["read", "search", "view"]
    allow_prefixes = ["git status", "ls"]
    deny_prefixes = ["rm -rf"]      # rejected without asking (deny_kinds likewise)
    suggest_after = 5               # `L` suggests rules after this many same decisions
    suggest_from_all_repositories = false   # true: from every repository's logs, not just this one

    [keymap]                        # binding id = key(s), applied with Textual's set_keymap
    "navtui.approve" = "y"

    [theme]
    name = "navtui-light"

    [clipboard]                     # how `c` copies: auto (OSC 52 where it works, else a file),
    method = "auto"                 # osc52 (always the escape) or file (always the file)

The valid top-level keys are read off the parser's option table (`app.options`: every long
option), so a new flag is a new key with no code here; values are checked by the option's own
`type` and `choices`. Flags on
the command line win over the file. Only `app/` reads this file; the core gets dataclasses.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_core.policy import Approvals
from agent_core.rule_suggestions import DEFAULT_MIN_COUNT
from agent_core.user_files import why_unreadable
from app.clipboard import METHODS
from app.options import Kind, Option

if TYPE_CHECKING:
    from app.args import Parser

CONFIG_ENV = "NAVTUI_CONFIG"
TABLES = ("keymap", "rules", "theme", "clipboard")
RULE_KEYS = ("allow_kinds", "allow_prefixes", "deny_kinds", "deny_prefixes")
SUGGEST_AFTER, SUGGEST_EVERYWHERE = "suggest_after", "suggest_from_all_repositories"
# Options that are no settings: they act and exit.
NOT_SETTINGS = frozenset({"help", "version"})
# Options that belong to one run (its issue, the session it resumes, where its log and patch
# go): stored in the file they would be wrong for every other run (`resume = "last"` refused
# every `--issue`).
RUN_ONLY = frozenset({"issue", "issue_file", "resume", "force", "patch_out", "trajectory"})


class ConfigError(Exception):
    """The config file cannot be used; the message names the file, line and key."""


@dataclass
class AllowRules:
    """What is approved (or rejected) without asking: action kinds and bash command prefixes;
    and how `L` suggests more (`agent_core.rule_suggestions`)."""

    allow_kinds: list[str] = field(default_factory=list)
    allow_prefixes: list[str] = field(default_factory=list)
    deny_kinds: list[str] = field(default_factory=list)
    deny_prefixes: list[str] = field(default_factory=list)
    suggest_after: int = DEFAULT_MIN_COUNT
    suggest_from_all_repositories: bool = False

    def approvals(self, *, auto: bool = False) -> Approvals:
        """These rules as every front end applies them (`agent_core.policy.Approvals`)."""
        return Approvals(auto=auto, allow_kinds=self.allow_kinds, allow_prefixes=self.allow_prefixes,
                         deny_kinds=self.deny_kinds, deny_prefixes=self.deny_prefixes)


@dataclass
class Config:
    """A validated config file (all empty when there is none)."""

    path: Path
    exists: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # option dest -> converted value
    keymap: dict[str, str] = field(default_factory=dict)
    rules: AllowRules = field(default_factory=AllowRules)
    theme: str | None = None
    clipboard: str = "auto"  # `[clipboard] method`
    text: str = field(default="", repr=False)  # the file as read

    def error(self, table: str | None, key: str, message: str) -> ConfigError:
        """A ConfigError naming this file, the line where `key` is set in `[table]`, and `key`."""
        line = line_of(self.text, table, key)
        where = f"{self.path}:{line}" if line else str(self.path)
        name = f"[{table}] {key}" if table else key
        return ConfigError(f"{where}: {name}: {message}")


def config_path() -> Path:
    """`$NAVTUI_CONFIG`, else `navtui/config.toml` in the platform's user config directory."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_config_path("navtui") / "config.toml"


# --- reading --------------------------------------------------------------------------------


def settings_of(parser: Parser) -> dict[str, Option]:
    """Config key -> option, for every long option of `parser`."""
    return {key: option for key, option in parser.options.settings().items()
            if option.dest not in NOT_SETTINGS | RUN_ONLY}


def load_config(
    parser: Parser,
    path: Path | None = None,
    *,
    also: tuple[Parser, ...] = (),
) -> Config:
    """Read and check the config file against the options of `parser` (and of `also`: a
    subcommand accepts every setting of the main command); ConfigError says what is wrong."""
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the config file {path}: {why_unreadable(path, error)}") from None
    return parse_config(text, path, (*also, parser))


def parse_config(text: str, path: Path, parsers: tuple[Parser, ...]) -> Config:
    """`text`, the config file at `path`, checked against the options of `parsers`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    settings: dict[str, Option] = {}
    for each in parsers:
        settings.update(settings_of(each))
    return _check(data, text, path, settings)


def _check(data: dict[str, Any], text: str, path: Path, settings: dict[str, Option]) -> Config:
    config = Config(path, exists=True, text=text)
    fail = config.error
    for key, value in data.items():
        if key in TABLES:
            if not isinstance(value, dict):
                raise fail(None, key, f"must be a table: write [{key}] on its own line")
            continue
        option = settings.get(key)
        if key in RUN_ONLY:
            flag = "--" + key.replace("_", "-")
            raise fail(None, key, f"belongs to one run, not to the config file: give {flag} on "
                                  "the command line")
        if option is None:
            known = ", ".join(sorted(settings))
            raise fail(None, key, f"unknown setting; the settings are the long flags: {known}, "
                                  f"and the tables [{'], ['.join(TABLES)}]")
        if value == "" and option.kind is Kind.VALUE and option.default is None:
            continue  # "" keeps the built-in default, as the template's commented lines say
        try:
            config.options[option.dest] = convert(option, value)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as error:
            raise fail(None, key, str(error)) from None

    keymap = data.get("keymap", {})
    for binding, keys in keymap.items():
        if not isinstance(keys, str) or not keys.strip():
            raise fail("keymap", binding, 'must be a key string, e.g. "y" or "ctrl+y,f5"')
    config.keymap = dict(keymap)

    rules = data.get("rules", {})
    for key, value in rules.items():
        if key == SUGGEST_AFTER:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise fail("rules", key, f"must be a whole number of at least 1, got {_toml(value)}")
            continue
        if key == SUGGEST_EVERYWHERE:
            if not isinstance(value, bool):
                raise fail("rules", key, f"must be true or false, got {_toml(value)}")
            continue
        if key not in RULE_KEYS:
            raise fail("rules", key, f"unknown rule list; use {', '.join(RULE_KEYS)} (or "
                                     f"{SUGGEST_AFTER}, {SUGGEST_EVERYWHERE})")
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise fail("rules", key, 'must be a list of strings, e.g. ["git status", "ls"]')
    config.rules = AllowRules(**{key: list(rules.get(key, [])) for key in RULE_KEYS},
                              suggest_after=rules.get(SUGGEST_AFTER, DEFAULT_MIN_COUNT),
                              suggest_from_all_repositories=rules.get(SUGGEST_EVERYWHERE, False))

    theme = data.get("theme", {})
    for key, value in theme.items():
        if key != "name":
            raise fail("theme", key, 'unknown theme setting; use name = "navtui-light"')
        if value not in theme_names():
            raise fail("theme", key, f"unknown theme {value!r}; choose one of "
                                     f"{', '.join(theme_names())}")
    config.theme = theme.get("name")

    for key, value in data.get("clipboard", {}).items():
        if key != "method":
            raise fail("clipboard", key, 'unknown clipboard setting; use method = "auto"')
        if value not in METHODS:
            raise fail("clipboard", key, f"must be one of {', '.join(METHODS)}, got {_toml(value)}")
        config.clipboard = value
    return config


def convert(option: Option, value: Any) -> Any:
    """`value` from the file as the option would have parsed it on the command line."""
    if option.kind is Kind.SWITCH:  # --load-in-4bit
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {_toml(value)}")
        return value
    if option.kind in (Kind.LIST, Kind.REPEATABLE):  # --writable A --writable B
        if not isinstance(value, list):
            raise ValueError(f"must be a list, e.g. [{_toml(value)}]")
        return [_convert_one(option, item) for item in value]
    return _convert_one(option, value)


def _convert_one(option: Option, value: Any) -> Any:
    if isinstance(value, (bool, list, dict)) or not isinstance(value, (str, int, float)):
        raise ValueError(f"must be {'a number' if _takes_number(option) else 'a string'}, "
                         f"got {_toml(value)}")
    if option.type is None and not isinstance(value, str):
        raise ValueError(f'must be a string: write "{value}"')
    converted = option.type(str(value)) if option.type is not None else value
    if option.choices is not None and converted not in option.choices:
        raise ValueError(f"must be one of {', '.join(map(str, option.choices))}, got {_toml(value)}")
    return converted


def _takes_number(option: Option) -> bool:
    """The option's type makes numbers (int, float, or a checked kind of them)."""
    try:
        return option.type is not None and isinstance(option.type("1"), (int, float))
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, (str, list, dict)) else str(value)


def line_of(text: str, table: str | None, key: str) -> int | None:
    """The line (1-based) where `key` is set in `[table]` (None: top level), or as the dotted
    key `table.key` before any table, if it can be found."""
    def quoted(name: str) -> str:
        return rf"""(?:{re.escape(name)}|"{re.escape(name)}"|'{re.escape(name)}')"""

    in_table = re.compile(rf"^\s*{quoted(key)}\s*=")
    dotted = re.compile(rf"^\s*{quoted(table)}\s*\.\s*{quoted(key)}\s*=") if table else None
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1).strip("\"'")
            if table is None and current == key:
                return number
        elif current == table and in_table.match(line):
            return number
        elif current is None and dotted is not None and dotted.match(line):
            return number
    return None


def theme_names() -> list[str]:
    """navtui's own themes and Textual's built-in ones."""
    from textual.theme import BUILTIN_THEMES

    return ["navtui-dark", "navtui-light", *BUILTIN_THEMES]


# --- applying -------------------------------------------------------------------------------


def explicit_options(parser: Parser, argv: list[str]) -> set[str]:
    """The dests of the options `argv` gives on the command line (not their defaults)."""
    return parser.options.given(argv)


def apply_config(
    parser: Parser, config: Config, argv: list[str], *, skip: frozenset[str] = frozenset()
) -> None:
    """Make the file's values `parser`'s defaults, so flags win over them.

    A flag given on the command line also clears the file's value for the options it excludes
    (`--load-in-8bit` beats `load_in_4bit = true`); options in `skip` keep their built-in default.
    """
    known = parser.options.dests
    excluded = parser.options.excluded_by(explicit_options(parser, argv))
    parser.set_defaults(**{
        dest: value for dest, value in config.options.items()
        if dest in known and dest not in excluded and dest not in skip
    })


def configure(
    parser: Parser,
    argv: list[str],
    *,
    logged_backend: tuple[str, ...] = (),
    also: tuple[Parser, ...] = (),
) -> Config:
    """Load the config file and make it `parser`'s defaults (settings only `also` has are
    valid but not applied). With `--resume`, the options in `logged_backend` are left to the
    logged session unless given as flags."""
    config = load_config(parser, also=also)
    resuming = "resume" in explicit_options(parser, argv)
    apply_config(parser, config, argv, skip=frozenset(logged_backend) if resuming else frozenset())
    return config


# --- rules written back from the app ----------------------------------------------------------


def every_parser() -> tuple[Parser, ...]:
    """The parsers whose settings the file may hold: `navtui batch`'s and the main command's."""
    from app.args import batch_parser, build_parser

    return (batch_parser(), build_parser())


def load_rules(path: Path | None = None) -> AllowRules:
    """The `[rules]` of the config file (empty without one); ConfigError when it is broken."""
    *also, parser = every_parser()
    return load_config(parser, path, also=tuple(also)).rules


def save_rule(*, kind: str | None = None, prefix: str | None = None, path: Path | None = None,
              deny: bool = False) -> Path:
    """Add an allow rule (an action kind or a bash prefix; `deny`: a deny rule) to the file's
    `[rules]`; returns the path.

    Only the rule lists change: the rest of the file (comments, order, quoting, other tables) is
    kept byte for byte. A file that is not valid TOML raises ConfigError and stays as it is.
    """
    path = path or config_path()
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    rules = load_rules(path)
    side = "deny" if deny else "allow"
    wanted = {f"{side}_kinds": kind, f"{side}_prefixes": prefix}
    added = {key: value for key, value in wanted.items()
             if value and value.strip() and value not in getattr(rules, key)}
    if not added:
        return path
    new_text = with_rules_added(text, path, added)
    expected = dataclasses.replace(rules, **{key: getattr(rules, key) + [value] for key, value in added.items()})
    if parse_config(new_text, path, every_parser()).rules != expected:  # never write what does not read back
        raise ConfigError(f"{path}: cannot add the rule without changing the rest of the file; "
                          f"add it to [rules] by hand")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(new_text, encoding="utf-8")
    temporary.replace(path)
    return path


def save_allow_rule(prefix: str = "", *, kind: str = "", deny: bool = False) -> str:
    """Save a bash prefix rule (or a kind rule; `deny`: a deny rule) for every repository; says
    where, or why it could not."""
    try:
        return f"saved in {save_rule(prefix=prefix or None, kind=kind or None, deny=deny)}"
    except (ConfigError, OSError, tomllib.TOMLDecodeError) as error:
        return f"not saved: {error}"


def with_rules_added(text: str, path: Path, added: dict[str, str]) -> str:
    """`text` with each value of `added` appended to its rule list in `[rules]` (edited in place
    by tomlkit; the table is added at the end when the file has none)."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        document = tomlkit.parse(text)
    except ParseError as error:
        raise ConfigError(f"{path}:{error.line}: not valid TOML: {error}") from None
    rules = document.get("rules")
    if rules is None:
        rules = tomlkit.table()
        if text.strip():  # after a blank line
            ending = len(text) - len(text.rstrip("\n"))
            for _ in range(2 - min(ending, 2)):
                document.add(tomlkit.nl())
        document.append("rules", rules)
    for key, value in added.items():
        if key not in rules:
            rules[key] = [value]
        elif "\n" in rules[key].as_string():  # one item a line: a new line (after any comment)
            rules[key].add_line(value, indent="  ")
        else:
            rules[key].append(value)
    return tomlkit.dumps(document)


# --- `navtui config show|path|edit` ------------------------------------------------------------


def render(config: Config, parser: Parser) -> str:
    """The settings in effect from the file, as TOML."""
    keys = {option.dest: key for key, option in settings_of(parser).items()}
    lines = [f"{keys.get(dest, dest)} = {_toml(value)}" for dest, value in config.options.items()]
    rules = [f"{key} = {_toml(getattr(config.rules, key))}" for key in RULE_KEYS
             if getattr(config.rules, key)]
    defaults = AllowRules()
    rules += [f"{key} = {_toml(getattr(config.rules, key))}" for key in (SUGGEST_AFTER, SUGGEST_EVERYWHERE)
              if getattr(config.rules, key) != getattr(defaults, key)]
    for table, entries in (
        ("rules", rules),
        ("keymap", [f"{json.dumps(binding)} = {json.dumps(keys_)}" for binding, keys_ in config.keymap.items()]),
        ("theme", [f"name = {json.dumps(config.theme)}"] if config.theme else []),
        ("clipboard", [f"method = {json.dumps(config.clipboard)}"] if config.clipboard != "auto" else []),
    ):
        if entries:
            lines += ["", f"[{table}]", *entries]
    return "\n".join(lines) + "\n"


def template(parser: Parser) -> str:
    """A new config file: every setting commented out, with its default and help."""
    lines = ["# navtui settings: a flag on the command line wins over its setting here;",
             '# a setting left at "" keeps its built-in default.', ""]
    for key, option in settings_of(parser).items():
        default = parser.get_default(option.dest)
        value = _toml(default) if default not in (None, "") else '""'
        summary = " ".join((option.help or "").split())
        lines.append(f"# {key} = {value}" + (f"    # {summary}" if summary else ""))
    lines += ["", "# [rules]", '# allow_kinds = ["read", "search", "view"]',
              '# allow_prefixes = ["git status", "ls"]', '# deny_prefixes = ["rm -rf"]',
              f"# {SUGGEST_AFTER} = {DEFAULT_MIN_COUNT}", f"# {SUGGEST_EVERYWHERE} = false", "", "# [keymap]",
              '# "navtui.approve" = "y"', "", "# [theme]", '# name = "navtui-light"', "",
              "# [clipboard]", '# method = "auto"    # auto, osc52 or file', ""]
    return "\n".join(lines)


def edit(parser: Parser, path: Path | None = None) -> Path:
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
