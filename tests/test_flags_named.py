"""Every `--flag` a message or docstring names is a real navtui flag (issue 14: "raise --timeout"
and "omit --tokenizer" named flags that did not exist).

Strings are read from the source with `ast`. Not messages, and so skipped: a string that is one
argv element of another program (`"--no-color"`, `"--format=%(refname)"`), a command line of
another program in backticks (`git rebase --abort`, `vllm serve ... --port 8000`), and the
fragments code pastes into a command line (they start with the program or a space).
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

from app import cli
from app.args import build_parser
from app.compose import make_backend

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("agent_core", "app", "widgets")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w=-])")
BACKTICKS = re.compile(r"`([^`]*)`")
ARGV_ELEMENT = re.compile(r"--[a-z][a-z0-9-]*(?:=.*)?", re.DOTALL)
COMMAND_FRAGMENT = re.compile(r"^(?:\s|grep |diff |git )")


def help_text(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        cli.main([*argv, "--help"])
    return out.getvalue()


def real_flags() -> set[str]:
    """Flags of the main parser and of every subcommand, from their own --help."""
    texts = [help_text([])] + [help_text([name]) for name in cli.SUBCOMMANDS]
    return {flag for text in texts for flag in FLAG.findall(text)}


def message_flags(text: str) -> list[str]:
    """The navtui flags a string names (see the module docstring for what is skipped)."""
    if ARGV_ELEMENT.fullmatch(text) or COMMAND_FRAGMENT.match(text):
        return []
    text = BACKTICKS.sub(lambda m: m.group(0) if m.group(1).startswith("navtui") else "", text)
    return FLAG.findall(text)


def named_flags() -> list[tuple[str, int, str]]:
    found = []
    for package in SOURCES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    for flag in message_flags(node.value):
                        found.append((str(path.relative_to(ROOT)), node.lineno, flag))
    return found


def test_every_flag_named_in_the_code_exists():
    flags = real_flags()
    named = named_flags()
    assert len(named) > 50  # the scan does find the messages
    missing = [f"{path}:{line}: {flag}" for path, line, flag in named if flag not in flags]
    assert missing == []


def test_the_flags_the_issue_named_exist_and_reach_the_openai_backend(scripted_http):
    flags = real_flags()
    assert {"--request-timeout", "--tokenizer", "--max-new-tokens", "--max-stuck", "--threads"} <= flags
    args = build_parser().parse_args([
        "--base-url", scripted_http.base_url, "--model", "m", "--request-timeout", "7.5",
        "--tokenizer", "some/tokenizer", "/tmp",
    ])
    backend = make_backend(args)
    try:
        assert backend.timeout == 7.5 and backend._tokenizer_name == "some/tokenizer"
    finally:
        backend.close()


def test_the_scan_skips_other_programs_flags_but_not_navtuis():
    assert message_flags("run `git rebase --abort`") == []
    assert message_flags("--no-color") == [] and message_flags("--format=%(refname)") == []
    assert message_flags("resume with `navtui --resume ID`") == ["--resume"]
    assert message_flags("or raise --timeout") == ["--timeout"]
