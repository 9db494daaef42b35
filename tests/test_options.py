"""The parsers' option tables: complete, typed, and the only way app/ learns about options."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.args import Parser, batch_parser, build_parser
from app.options import Kind

APP = Path(__file__).resolve().parent.parent / "app"
ARGPARSE_INTERNALS = re.compile(
    r"_actions\b|_AppendAction|_mutually_exclusive_groups|_group_actions|\bSUPPRESS\b"
)


def test_app_does_not_reach_into_argparse():
    found = [
        f"{path.relative_to(APP.parent)}:{number}: {line.strip()}"
        for path in sorted(APP.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ARGPARSE_INTERNALS.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(("make", "argv"), [(build_parser, []), (batch_parser, ["x.jsonl"])])
def test_the_table_holds_every_option_the_parser_fills_in(make, argv):
    parser = make()
    parsed = vars(parser.parse_args(argv))  # every dest but --help's and --version's
    assert set(parsed) == {o.dest for o in parser.options if o.kind is not Kind.ACTION}


def test_kinds_groups_and_keys():
    options = {option.dest: option for option in build_parser().options}
    assert options["writable"].kind is Kind.REPEATABLE
    assert options["load_in_4bit"].kind is Kind.SWITCH
    assert options["max_steps"].kind is Kind.VALUE and options["max_steps"].type("3") == 3
    assert options["repo"].kind is Kind.POSITIONAL and options["repo"].keys == ()
    assert options["version"].kind is Kind.ACTION and options["version"].keys == ()
    assert options["backend"].choices == ("hf", "openai", "replay")
    assert options["load_in_4bit"].exclusive == options["load_in_8bit"].exclusive is not None
    assert options["issue"].exclusive == options["issue_file"].exclusive != options["load_in_4bit"].exclusive
    assert options["model"].exclusive is None
    assert options["no_submit_review"].keys == ("no_submit_review",)


def test_added_later_and_negatable_options_are_recorded():
    import argparse

    parser = Parser(prog="x")
    parser.add_argument("--colour", action=argparse.BooleanOptionalAction)
    group = parser.add_argument_group("g").add_mutually_exclusive_group()
    group.add_argument("--fast", action="store_true")
    group.add_argument("--slow", action="store_true")
    parser.add_argument("--pair", nargs=2, type=int)
    assert parser.options.settings().keys() == {"colour", "fast", "slow", "pair"}
    assert [o.kind for o in parser.options] == [Kind.SWITCH, Kind.SWITCH, Kind.SWITCH, Kind.LIST]
    assert parser.options.excluded_by({"fast"}) == {"slow"}


@pytest.mark.parametrize(
    ("argv", "given"),
    [
        ([], set()),
        (["repo"], {"repo"}),
        (["--max-ti", "3", "repo"], {"repo"}),  # no abbreviation is taken (`--mode` is no `--model`)
        (["--max-steps=4", "--load-in-8bit"], {"max_steps", "load_in_8bit"}),
        (["--writable", "a", "--writable", "b"], {"writable"}),
        (["--resume", "last", "--unknown-flag"], {"resume"}),
        (["--no-submit-review", "--json"], {"no_submit_review", "json"}),
        (["--model"], set()),  # does not parse: the real parse says why
        (["--max-s", "3"], {"repo"}),  # no flag: the real parse names it, and the one meant
        (["--", "--auto"], {"repo"}),
    ],
)
def test_given_names_what_the_command_line_says_not_the_defaults(argv, given):
    parser = build_parser()
    assert parser.options.given(argv) == given
    assert parser.get_default("max_steps") == 50  # the parser itself is left as it was
