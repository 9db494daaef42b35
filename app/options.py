"""A public description of a parser's options, recorded while they are added.

`app.args.Parser` notes every option it, its argument groups and its mutually exclusive groups
add as an `Option` (dest, flags, kind, type, choices, default, help, exclusive group) in its
`OptionTable`. `app.config` reads that table to know which TOML keys exist, which take lists,
which exclude each other and which the user gave on the command line; it never looks inside
argparse.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NoReturn


class Kind(StrEnum):
    """What an option takes."""

    SWITCH = "switch"  # no value: --load-in-4bit
    VALUE = "value"  # one value: --model NAME
    LIST = "list"  # several values after one flag (nargs *, + or a number)
    REPEATABLE = "repeatable"  # one value per use, collected: --writable A --writable B
    POSITIONAL = "positional"  # REPO
    ACTION = "action"  # it acts and exits (--version): no setting


# The argparse `action=` names that collect repeated uses, or act and exit.
REPEATING_ACTIONS = frozenset({"append", "extend"})
ACTING_ACTIONS = frozenset({"help", "version"})


@dataclass(frozen=True)
class Option:
    """One option as the command line and the config file see it."""

    dest: str
    flags: tuple[str, ...]
    kind: Kind
    nargs: int | str | None = None
    type: Callable[[str], Any] | None = None
    choices: tuple[Any, ...] | None = None
    default: Any = None
    help: str | None = None
    exclusive: int | None = None  # the mutually exclusive group it is in (numbered per parser)
    negatable: bool = False  # BooleanOptionalAction: its `--no-` flag says false

    @property
    def keys(self) -> tuple[str, ...]:
        """Its config keys: each long flag, `-` written `_` (a `--no-x` of a negatable one is
        `x = false`, so no key of its own)."""
        if self.kind is Kind.ACTION:
            return ()
        return tuple(
            flag[2:].replace("-", "_") for flag in self.flags
            if flag.startswith("--") and not (self.negatable and flag.startswith("--no-"))
        )


def kind_of(action: argparse.Action, requested: object) -> Kind:
    """The kind of the option `add_argument(..., action=requested)` returned as `action`."""
    if requested in ACTING_ACTIONS:
        return Kind.ACTION
    if not action.option_strings:
        return Kind.POSITIONAL
    if requested in REPEATING_ACTIONS:
        return Kind.REPEATABLE
    if action.nargs == 0:
        return Kind.SWITCH
    if action.nargs in ("*", "+") or isinstance(action.nargs, int):
        return Kind.LIST
    return Kind.VALUE


class _Unparsable(Exception):
    pass


class _QuietParser(argparse.ArgumentParser):
    """A parser that raises instead of printing and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _Unparsable(message)


class OptionTable:
    """The options of one parser, in the order they were added."""

    def __init__(self, *, prefix_chars: str = "-", allow_abbrev: bool = True) -> None:
        self.prefix_chars = prefix_chars
        self.allow_abbrev = allow_abbrev
        self._options: list[Option] = []
        self._groups = 0

    def __iter__(self) -> Iterator[Option]:
        return iter(self._options)

    def record(self, action: argparse.Action, requested: object, exclusive: int | None = None) -> None:
        """Note the option `add_argument(..., action=requested)` just added."""
        self._options.append(Option(
            dest=action.dest,
            flags=tuple(action.option_strings),
            kind=kind_of(action, requested),
            nargs=action.nargs,
            type=action.type if callable(action.type) else None,
            choices=tuple(action.choices) if action.choices is not None else None,
            default=action.default,
            help=action.help,
            exclusive=exclusive,
            negatable=requested is argparse.BooleanOptionalAction,
        ))

    def new_exclusive_group(self) -> int:
        self._groups += 1
        return self._groups

    @property
    def dests(self) -> set[str]:
        return {option.dest for option in self._options}

    def settings(self) -> dict[str, Option]:
        """Config key -> option, for every long option that is a setting."""
        return {key: option for option in self._options for key in option.keys}

    def excluded_by(self, given: set[str]) -> set[str]:
        """The dests that options in `given` exclude (their mutually exclusive peers)."""
        groups = {option.exclusive for option in self._options
                  if option.dest in given and option.exclusive is not None}
        return {option.dest for option in self._options
                if option.exclusive in groups and option.dest not in given}

    def given(self, argv: Sequence[str]) -> set[str]:
        """The dests of the options `argv` gives (not their defaults); empty when `argv` does
        not parse (the real parse then says why)."""
        shadow = _QuietParser(add_help=False, prefix_chars=self.prefix_chars,
                              allow_abbrev=self.allow_abbrev)
        for option in self._options:
            if option.kind is Kind.POSITIONAL:
                shadow.add_argument(option.dest, nargs=option.nargs, default=None)
            elif option.kind in (Kind.SWITCH, Kind.ACTION):
                shadow.add_argument(*option.flags, dest=option.dest, action="store_const",
                                    const=True, default=None)
            elif option.kind is Kind.REPEATABLE:
                shadow.add_argument(*option.flags, dest=option.dest, action="append", default=None)
            else:  # a value is kept as the text given: what it converts to does not matter here
                const = True if option.nargs == "?" else None
                shadow.add_argument(*option.flags, dest=option.dest, nargs=option.nargs,
                                    const=const, default=None)
        try:
            parsed, _ = shadow.parse_known_args(list(argv))
        except _Unparsable:
            return set()
        return {dest for dest, value in vars(parsed).items() if value is not None}


class OptionGroup:
    """An argparse argument group (or mutually exclusive group) that records what it adds."""

    def __init__(self, group: Any, table: OptionTable, exclusive: int | None = None) -> None:
        self.group = group
        self.table = table
        self.exclusive = exclusive

    def add_argument(self, *flags: str, **kwargs: Any) -> argparse.Action:
        action = self.group.add_argument(*flags, **kwargs)
        self.table.record(action, kwargs.get("action"), self.exclusive)
        return action

    def add_mutually_exclusive_group(self, *, required: bool = False) -> OptionGroup:
        group = self.group.add_mutually_exclusive_group(required=required)
        return OptionGroup(group, self.table, self.table.new_exclusive_group())
