"""Headless pieces: the stdin prompter's answers, the transcript's trimming, no Textual in --auto."""

from __future__ import annotations

import subprocess
import sys

from rich.console import Console

from agent_core.actions import Bash
from agent_core.events import StepExecuted, StepProposed
from agent_core.formats import parse
from agent_core.steps import Approve, EditAction, Observation, ProposedStep, Quit, Reject, StepRecord
from app.headless import StdinPrompter, Transcript, trim_lines
from tests.test_session import FIX_SCRIPTS, write_script

PROPOSAL = StepProposed(1, ProposedStep("look", Bash("ls"), "raw", "text"), "ls")


def prompter(answers: list[str]) -> tuple[StdinPrompter, Console]:
    console = Console(record=True, width=100)
    lines = iter(answers)

    def read_line(prompt: str) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    def parse_edit(text: str):
        return parse(text, "auto").action

    return StdinPrompter(parse_edit, console, read_line=read_line), console


def test_prompter_answers():
    assert prompter(["a"])[0](PROPOSAL) == Approve()
    assert prompter(["approve"])[0](PROPOSAL) == Approve()
    assert prompter(["r", "read the tests first"])[0](PROPOSAL) == Reject("read the tests first")
    assert prompter(["q"])[0](PROPOSAL) == Quit()
    assert prompter([])[0](PROPOSAL) == Quit()


def test_prompter_asks_again_after_a_bad_edit_or_answer():
    ask, console = prompter(["x", "e", "not an action", ".", "e", "Action: bash pwd", "."])
    assert ask(PROPOSAL) == EditAction(Bash("pwd"))
    shown = console.export_text()
    assert "answer a, r, e or q" in shown and "not an action:" in shown


def test_parse_errors_in_edits_are_reported_not_raised():
    ask, _ = prompter(["e", "<tool_call>{broken", "."])
    assert ask(PROPOSAL) == Quit()  # EOF after the failed edit


def test_trim_lines_keeps_head_and_tail():
    text = "\n".join(str(i) for i in range(100))
    trimmed = trim_lines(text, 3, 2)
    assert trimmed.splitlines() == ["0", "1", "2", "... [95 lines not shown] ...", "98", "99"]
    assert trim_lines("a\nb", 3, 2) == "a\nb"


def test_transcript_trims_long_observations_and_keeps_brackets_literal():
    console = Console(record=True, width=100)
    transcript = Transcript(console, observation_lines=4)
    transcript(PROPOSAL)
    output = "\n".join(f"[bold]line {i}[/bold]" for i in range(50))
    record = StepRecord(1, PROPOSAL.step, Approve(), Bash("ls"), Observation(output, 0))
    transcript(StepExecuted(record))
    text = console.export_text()
    assert "[bold]line 0[/bold]" in text and "[bold]line 49[/bold]" in text
    assert "line 25" not in text and "[46 lines not shown]" in text
    assert "▶ ls" in text


def test_auto_never_imports_textual(git_repo, tmp_path):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["toolcall"])
    code = (
        "import sys\n"
        "from app.cli import main\n"
        f"code = main(['--auto', '--json', '--script', {str(script)!r}, '--issue', 'x', {str(git_repo)!r}])\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'torch', 'transformers'})\n"
        "print('RESULT', code, loaded, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "RESULT 0 []" in result.stderr, result.stderr


def test_an_error_that_ends_the_session_is_printed_once():
    from io import StringIO

    from agent_core.events import SessionError, SessionFinished

    out = StringIO()
    transcript = Transcript(Console(file=out, width=200))
    transcript(SessionError("cannot connect to http://localhost:1/v1"))
    transcript(SessionFinished("error", "cannot connect to http://localhost:1/v1"))
    assert out.getvalue().count("cannot connect") == 1
    assert out.getvalue().rstrip().endswith("finished: error")
