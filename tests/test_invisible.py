"""Invisible and format characters (zero-width space, word joiner, BOM, soft hyphen, fillers, tag
characters, line separators: Unicode category Cf and friends) are shown as `⟨U+200B⟩` in every
front end, like bidi controls: `setup.py<U+200B>` must not pass for `setup.py`."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from agent_core.actions import Bash, StrReplaceEditor, Submit
from agent_core.sanitize import visible
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import make_session
from tests.test_cli import navtui
from tests.test_sanitize import _rendered
from tests.test_session import write_script

NAMED = ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u034f", "\u3164", "\U000e0041", "\U000e007f",
         "\U000e0000", "\u2028", "\u2029", "\u200d", "\u180e", "\u115f", "\uffa0"]
ZWSP = "\u200b"


@pytest.mark.parametrize("char", NAMED, ids=lambda c: f"U+{ord(c):04X}")
def test_each_named_invisible_character_is_shown_by_its_code_point(char: str):
    assert visible(f"setup.py{char}") == f"setup.py⟨U+{ord(char):04X}⟩"


def test_every_format_character_is_visible_and_ordinary_text_is_untouched():
    for code in range(0x110000):
        if unicodedata.category(chr(code)) == "Cf":
            assert visible(chr(code)) == f"⟨U+{code:04X}⟩", hex(code)
    for code in range(0xE0000, 0xE0080):
        assert visible(chr(code)) == f"⟨U+{code:04X}⟩", hex(code)
    ordinary = "café naïve Ünïcode 中文 日本語 한국어 עברית العربية emoji 🙂 tab\tnewline\n"
    assert visible(ordinary) == ordinary


def test_the_headless_transcript_marks_them_in_commands_outputs_diffs_and_names(git_repo: Path,
                                                                               tmp_path: Path):
    script = write_script(tmp_path / "s.jsonl", [
        f"Thought: keep the env\nAction: bash touch 'setup.py{ZWSP}' && ls -1",
        "Thought: note it\nAction: edit README.md 1 1\n# calc\u2060\u00ad",
        "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--script", str(script), "--issue", "tags \U000e0041\U000e0042",
                    str(git_repo))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for char in (ZWSP, "\u2060", "\u00ad", "\U000e0041"):
        assert char not in out + result.stderr, f"U+{ord(char):04X}"
    assert "tags ⟨U+E0041⟩⟨U+E0042⟩" in out  # the issue
    assert "▶ touch 'setup.py⟨U+200B⟩' && ls -1" in out  # the command
    assert "│ setup.py⟨U+200B⟩ " in out  # its output (a file name)
    assert "+# calc⟨U+2060⟩⟨U+00AD⟩" in out  # the diff
    assert "diff --git a/setup.py⟨U+200B⟩ b/setup.py⟨U+200B⟩" in out  # the final diff's name


async def test_the_approval_card_marks_them_in_the_command_diff_and_output(git_repo: Path):
    create = StrReplaceEditor(command="create", path=f"setup.py{ZWSP}", file_text="x = 1\ufeff\n")
    session = make_session(git_repo, [
        ("Clean.", Bash(f"echo git clean -fdx -e .env{ZWSP}")),
        ("Create.", create),
        ("Done.", Submit()),
    ])
    async with running_app(session, git_repo, size=(140, 40), wait_for=None) as (app, pilot, watch):
        main = app.main
        await watch.until(lambda: main is not None and main.pending is not None, "proposal 1")
        await pilot.pause()
        command = _rendered(main.query_one("#card-command"))
        assert "-e .env⟨U+200B⟩" in command and ZWSP not in command
        await pilot.press("a")
        await watch.until(lambda: main.pending is not None and main.pending.index == 2, "proposal 2")
        await pilot.pause()
        named = _rendered(main.query_one("#card-command"))
        assert "create setup.py⟨U+200B⟩" in named and ZWSP not in named
        diff = _rendered(main.query_one("#card-diff"))
        assert "x = 1⟨U+FEFF⟩" in diff and "\ufeff" not in diff
        log = main.query_one("OutputLog")
        assert any("-e .env⟨U+200B⟩" in line for line in log.lines)
        assert all(ZWSP not in line for line in log.lines)
        await pilot.press("q")
    session.close()


def test_json_lines_carry_them_escaped_and_exact(git_repo: Path, tmp_path: Path):
    thought = f"keep .env{ZWSP} and \U000e0041\u2028\u00ad"
    script = write_script(tmp_path / "s.jsonl", [
        f"Thought: {thought}\nAction: bash echo hi", "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--json", "--script", str(script), "--issue", "x", str(git_repo))
    assert result.returncode == 0, result.stderr
    assert not any(c in result.stdout for c in (ZWSP, "\U000e0041", "\u2028", "\u00ad"))
    assert "\\u200b" in result.stdout and "\\udb40\\udc41" in result.stdout
    thoughts = [json.loads(line)["step"]["thought"] for line in result.stdout.splitlines()
                if json.loads(line)["type"] == "StepProposed"]
    assert thoughts[0] == thought
