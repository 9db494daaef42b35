"""Escape sequences from the model never reach the terminal: `visible` and every front end that
shows model text, commands, outputs or diffs (`--plain`, the `--auto` transcript, `--json`, the
TUI)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agent_core.actions import Bash, StrReplaceEditor, Submit
from agent_core.sanitize import json_safe, visible
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import make_session
from tests.test_cli import navtui
from tests.test_session import write_script

# The spoof from the issue: the terminal shows `▶ ls -la`, bash runs `echo PWNED > …`.
SPOOF_TAIL = "#\x1b[1G\x1b[2K▶ ls -la"
SPOOF_SHOWN = "#␛[1G␛[2K▶ ls -la"
# OSC 52: "set the clipboard to base64('pwned')", ended by BEL.
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
OSC52_SHOWN = "␛]52;c;cHduZWQ=␇"


def test_visible_makes_every_control_character_visible_but_newline_and_tab():
    assert visible("plain text\n\tindented") == "plain text\n\tindented"
    assert visible(SPOOF_TAIL) == SPOOF_SHOWN
    assert visible(OSC52) == OSC52_SHOWN
    assert visible("a\x00b\x7fc\x08") == "a␀b␡c␈"
    assert visible("progress 10%\rprogress 90%") == "progress 10%␍progress 90%"
    assert visible("crlf line\r\nnext\r\n") == "crlf line\nnext\n"
    assert visible("8-bit CSI \x9b2J") == "8-bit CSI ⟨U+009B⟩2J"
    # Trojan Source: a right-to-left override hides the order of what follows.
    assert visible("x = 1 \u202e// comment") == "x = 1 ⟨U+202E⟩// comment"
    # Undecodable bytes carried as surrogates come out as their byte, and can be printed.
    shown = visible("caf\udce9.txt \ud83d")
    assert shown == "caf\\xe9.txt ⟨U+D83D⟩"
    shown.encode("utf-8")
    for code in [*range(0x20), *range(0x7F, 0xA0)]:
        if chr(code) not in "\n\t":
            assert chr(code) not in visible(f"x{chr(code)}y"), hex(code)


def test_json_safe_escapes_what_a_utf8_file_or_terminal_cannot_take_and_nothing_else():
    for text in ("plain ascii", "a\x7fb", "C1 \x9b here", "bidi \u202e", "caf\u00e9 \u2014 \U0001f600",
                 "lone \udcff byte", "sep \u2028"):
        encoded = json.dumps({"t": text}, ensure_ascii=False)
        safe = json_safe(encoded)
        assert json.loads(safe) == {"t": text}
        assert not re.search("[\x7f-\x9f\u202e\u2028\ud800-\udfff]", safe)
        assert ("\\u" in safe) == (text not in ("plain ascii", "caf\u00e9 \u2014 \U0001f600"))


def test_plain_shows_the_spoofed_command_as_it_is(git_repo: Path, tmp_path: Path):
    target = tmp_path / "p"
    command = f"echo PWNED > {target} {SPOOF_TAIL}"
    script = write_script(tmp_path / "s.jsonl", [f"Thought: list files\nAction: bash {command}"])
    result = navtui("--plain", "--script", str(script), "--issue", "x", str(git_repo), stdin="q\n")
    assert result.returncode == 3, result.stderr
    assert "\x1b" not in result.stdout + result.stderr
    assert f"▶ echo PWNED > {target} {SPOOF_SHOWN}" in result.stdout
    assert not target.exists()


def test_auto_transcript_keeps_escapes_visible_in_thoughts_outputs_and_diffs(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [
        f"Thought: copy this {OSC52} now\nAction: bash printf 'out \\302\\2332J\\n'",
        "Thought: note it\nAction: edit README.md 1 1\n# calc \x1b[31mred\x1b[0m",
        "Thought: look\nAction: read README.md",
        "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--script", str(script), "--issue", f"bell {OSC52}", str(git_repo))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "\x1b" not in out + result.stderr and "\x07" not in out
    assert f"copy this {OSC52_SHOWN} now" in out  # the thought
    assert f"bell {OSC52_SHOWN}" in out  # the issue
    assert "out ⟨U+009B⟩2J" in out  # a command's output (bash drops ESC sequences itself)
    assert re.search(r"\b1\s+# calc ␛\[31mred␛\[0m", out)  # a file tool's output
    assert "+# calc ␛[31mred␛[0m" in out  # the step's and the final diff


def test_json_lines_carry_exact_text_but_no_raw_control_characters(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [
        f"Thought: {OSC52} \u202e \x9b\nAction: bash echo hi",
        "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--json", "--script", str(script), "--issue", "x", str(git_repo))
    assert result.returncode == 0, result.stderr
    assert not any(c in result.stdout for c in "\x1b\x07\x9b\u202e")
    thoughts = [json.loads(line)["step"]["thought"] for line in result.stdout.splitlines()
                if json.loads(line)["type"] == "StepProposed"]
    assert thoughts[0] == f"{OSC52} \u202e \x9b"


def _rendered(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def test_tui_widgets_show_escapes_visibly(git_repo: Path):
    spoof = f"echo PWNED > p {SPOOF_TAIL}"
    create = StrReplaceEditor(command="create", path="x.txt", file_text="\x1b]0;title\x07\n")
    session = make_session(git_repo, [
        (f"Think {OSC52} about it.", Bash(spoof)),
        ("Create.", create),
        ("Look.", StrReplaceEditor(command="view", path="x.txt")),
        ("Done.", Submit()),
    ])
    async with running_app(session, git_repo, size=(140, 40), wait_for=None) as (app, pilot, watch):
        main = app.main
        await watch.until(lambda: main is not None and main.pending is not None, "proposal 1")
        await main.query_one("ThoughtStream").settled()
        await pilot.pause()
        card = main.query_one("#card-command")
        shown = _rendered(card)
        assert SPOOF_SHOWN in shown and "\x1b" not in shown
        thoughts = main.query_one("ThoughtStream")
        text = "\n".join(_rendered(w) for w in thoughts.query("TurnText").results())
        assert OSC52_SHOWN in text and "\x1b" not in text
        await pilot.press("a")
        await watch.until(lambda: main.pending is not None and main.pending.index == 2, "proposal 2")
        await pilot.pause()
        diff = _rendered(main.query_one("#card-diff"))
        assert "␛]0;title␇" in diff and "\x1b" not in diff
        await pilot.press("a")
        await watch.until(lambda: main.pending is not None and main.pending.index == 3, "proposal 3")
        await pilot.press("a")
        await watch.until(lambda: main.pending is not None and main.pending.index == 4, "proposal 4")
        log = main.query_one("OutputLog")
        assert any("␛]0;title␇" in line for line in log.lines)
        assert all("\x1b" not in line for line in log.lines)
