"""The Session on real temp git repos, a real bash and the real replay backend.

Helpers here (`Recorder`, `write_script`, `make_session`, `prompt_text`, `FIX_SCRIPTS`) are shared
by the other tests/test_session_*.py and tests/test_e2e_*.py modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.actions import Bash, Read, StrReplaceEditor
from agent_core.backends.base import Backend, Prompt
from agent_core.backends.replay import ReplayBackend
from agent_core.events import (
    FormatError,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    TokenStreamed,
    TurnStarted,
    UsageReported,
)
from agent_core.executor import Executor
from agent_core.formats import ParseError
from agent_core.policy import AutoPolicy
from agent_core.session import Session, SessionConfig
from agent_core.steps import Approve, EditAction, Origin, Quit, Reject
from agent_core.workspace import Workspace
from tests.fixtures.repos import git

FIXED_LINE = "    return sum(values) / len(values)"
BUGGY_LINE = "    return sum(values) / (len(values) + 1)"
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
# What the scripted model runs to check its fix (a whole pytest start per dialect is too slow).
CHECK = f"{sys.executable} -c 'from calc.ops import average; print(average([2, 4, 6]))'"

# One scripted session per dialect that finds the planted bug, fixes it, runs the tests, submits.
FIX_SCRIPTS: dict[str, list[str]] = {
    "text": [
        "Thought: Where is average defined?\nAction: search average calc",
        "Thought: Let me read the module.\nAction: read calc/ops.py",
        f"Thought: The divisor is off by one.\nAction: edit calc/ops.py 7 7\n{FIXED_LINE}",
        f"Thought: Check it.\nAction: bash {CHECK}",
        "Thought: The tests pass.\nAction: submit",
    ],
    "toolcall": [
        '<think>\nFind the function.\n</think>\n\n<tool_call>\n{"name": "bash", "arguments": '
        '{"command": "grep -rn \\"def average\\" /testbed/calc"}}\n</tool_call>',
        '<tool_call>\n{"name": "str_replace_editor", "arguments": {"command": "view", '
        '"path": "/testbed/calc/ops.py"}}\n</tool_call>',
        "The divisor adds one.\n<tool_call>\n"
        + json.dumps(
            {
                "name": "str_replace_editor",
                "arguments": {
                    "command": "str_replace",
                    "path": "/testbed/calc/ops.py",
                    "old_str": BUGGY_LINE,
                    "new_str": FIXED_LINE,
                },
            }
        )
        + "\n</tool_call>",
        '<tool_call>\n{"name": "bash", "arguments": {"command": ' + json.dumps(CHECK) + "}}\n</tool_call>",
        '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>',
    ],
    "xml": [
        "Let me find it.\n\n<function=bash>\n<parameter=command>grep -rn average /testbed/calc"
        "</parameter>\n</function>",
        "Fix the divisor.\n\n<function=str_replace_editor>\n<parameter=command>str_replace"
        "</parameter>\n<parameter=path>/testbed/calc/ops.py</parameter>\n<parameter=old_str>\n"
        f"{BUGGY_LINE}\n</parameter>\n<parameter=new_str>\n{FIXED_LINE}\n</parameter>\n</function>",
        f"Check.\n\n<function=bash>\n<parameter=command>{CHECK}</parameter>\n</function>",
        "Done.\n\n<function=submit>\n</function>",
    ],
}

# A reply that parses in no dialect.
GARBAGE = "I think the bug is in average but I will not say how to look."


class Recorder(Backend):
    """A Backend that delegates to a real one and keeps every prompt it was sent."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.prompts: list[Prompt] = []

    @property
    def last_usage(self):
        return self.inner.last_usage

    def stream(self, prompt: Prompt) -> Iterator[str]:
        self.prompts.append(prompt)
        return self.inner.stream(prompt)

    def cancel(self) -> None:
        self.inner.cancel()

    def count_tokens(self, prompt: Prompt) -> int:
        return self.inner.count_tokens(prompt)

    def skip(self, turns: int) -> None:
        self.inner.skip(turns)

    def close(self) -> None:
        self.inner.close()


def prompt_text(prompt: Prompt) -> str:
    """Everything a prompt carries, as one string (for asserting what the model read)."""
    if prompt.text is not None:
        return prompt.text
    return "\n".join(str(m.get("content", "")) for m in prompt.messages or [])


def write_script(path: Path, outputs: list[str]) -> Path:
    path.write_text("".join(json.dumps({"output": o}) + "\n" for o in outputs), encoding="utf-8")
    return path


def make_session(
    repo: Path, script: Path, dialect: str, *, delay: float = 0.0, **config
) -> tuple[Session, Recorder, list]:
    """A real session over `repo` replaying `script`; returns it, its recorder and its events."""
    recorder = Recorder(ReplayBackend(script, delay=delay))
    config.setdefault("command_timeout", 60.0)
    session = Session(
        workspace=Workspace.open(repo),
        executor=Executor(repo, command_timeout=config["command_timeout"]),
        backend=recorder,
        issue="average([2, 4, 6]) returns 3 instead of 4.",
        config=SessionConfig(dialect=dialect, **config),
    )
    events: list = []
    session.subscribe(events.append)
    return session, recorder, events


@pytest.fixture
def sessions():
    """Builds sessions and closes their shells afterwards."""
    made: list[Session] = []

    def build(*args, **kwargs):
        made.append((result := make_session(*args, **kwargs))[0])
        return result

    yield build
    for session in made:
        session.close()


def repo_tests_pass(repo: Path) -> bool:
    result = subprocess.run(PYTEST.split(), cwd=repo, capture_output=True, text=True)
    return result.returncode == 0


def patch_applies_to_base(repo: Path, patch: str, tmp_path: Path) -> Path:
    """Clone the base commit, apply `patch` there, and return the clone."""
    clone = tmp_path / "base-clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    (tmp_path / "session.patch").write_text(patch)
    git(clone, "apply", "--check", str(tmp_path / "session.patch"))
    git(clone, "apply", str(tmp_path / "session.patch"))
    return clone


@pytest.mark.parametrize("dialect", ["text", "toolcall", "xml"])
def test_scripted_session_fixes_the_planted_bug(dialect, git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS[dialect])
    session, recorder, events = sessions(git_repo, script, dialect)

    finished = session.run(AutoPolicy())

    assert finished.reason == "submitted", finished.message
    assert (git_repo / "calc/ops.py").read_text().endswith(FIXED_LINE + "\n")
    assert repo_tests_pass(git_repo)
    clone = patch_applies_to_base(git_repo, finished.patch, tmp_path)
    assert (clone / "calc/ops.py").read_text() == (git_repo / "calc/ops.py").read_text()
    assert git(git_repo, "status", "--porcelain").strip() == "M calc/ops.py"
    assert len(session.records) == len(FIX_SCRIPTS[dialect])
    assert all(isinstance(r.decision, Approve) for r in session.records)
    test_run = session.records[-2]
    assert test_run.observation.exit_code == 0 and test_run.observation.output.strip() == "4.0"
    edit = next(r for r in session.records if "calc/ops.py" in r.diff)
    assert f"-{BUGGY_LINE}" in edit.diff and f"+{FIXED_LINE}" in edit.diff
    kinds = [type(e) for e in events]
    assert kinds[0] is SessionStarted and kinds[-1] is SessionFinished
    assert kinds.count(StepProposed) == kinds.count(StepExecuted) == len(FIX_SCRIPTS[dialect])
    assert TokenStreamed in kinds and UsageReported in kinds and TurnStarted in kinds
    # Every observation reached the model in the following prompt.
    assert len(recorder.prompts) == len(FIX_SCRIPTS[dialect])
    assert "4.0" in prompt_text(recorder.prompts[-1])


def test_format_error_becomes_the_next_observation(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [GARBAGE, "Thought: ok\nAction: read calc/ops.py"])
    session, recorder, events = sessions(git_repo, script, "text")
    session.start()
    assert session.propose() is None
    errors = [e for e in events if isinstance(e, FormatError)]
    assert len(errors) == 1 and errors[0].consecutive == 1 and errors[0].raw == GARBAGE
    proposal = session.propose()
    assert proposal is not None and proposal.step.action == Read("calc/ops.py")
    second = prompt_text(recorder.prompts[1])
    assert GARBAGE in second and "Your reply could not be used" in second
    assert "Action:" in second  # the parse error shows a correct example
    assert session.finished is None


def test_stops_after_consecutive_format_errors(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [GARBAGE] * 5)
    session, _, events = sessions(git_repo, script, "toolcall", max_format_errors=3)
    finished = session.run(AutoPolicy())
    assert finished.reason == "format_errors"
    assert "3 replies in a row" in finished.message
    assert [e.consecutive for e in events if isinstance(e, FormatError)] == [1, 2, 3]


def test_a_good_reply_resets_the_format_error_count(git_repo, tmp_path, sessions):
    good = "Thought: look\nAction: bash true"
    script = write_script(tmp_path / "s.jsonl", [GARBAGE, GARBAGE, good, GARBAGE, GARBAGE, "Thought: x\nAction: submit"])
    session, _, _ = sessions(git_repo, script, "text", max_format_errors=3)
    assert session.run(AutoPolicy()).reason == "submitted"


def test_reject_feedback_reaches_the_next_prompt(git_repo, tmp_path, sessions):
    script = write_script(
        tmp_path / "s.jsonl",
        ['<tool_call>\n{"name": "bash", "arguments": {"command": "rm -rf calc"}}\n</tool_call>'] * 2,
    )
    session, recorder, events = sessions(git_repo, script, "toolcall")
    session.propose()
    record = session.decide(Reject("never delete the package; read calc/ops.py instead"))
    assert record is not None and record.observation is None and record.checkpoint is None
    assert any(isinstance(e, StepRejected) for e in events)
    assert (git_repo / "calc/ops.py").exists()
    session.propose()
    messages = recorder.prompts[1].messages
    assert messages[-2]["role"] == "assistant" and "rm -rf calc" in messages[-2]["content"]
    assert messages[-1]["role"] == "tool"
    assert "never delete the package; read calc/ops.py instead" in messages[-1]["content"]
    assert session.pending is not None and session.pending.index == 2


def test_edit_runs_the_users_action_and_the_model_sees_it(git_repo, tmp_path, sessions):
    script = write_script(
        tmp_path / "s.jsonl",
        ['<tool_call>\n{"name": "bash", "arguments": {"command": "rm -rf calc"}}\n</tool_call>'] * 2,
    )
    session, recorder, _ = sessions(git_repo, script, "toolcall")
    session.propose()
    replacement = session.parse_edit("Thought: safer\nAction: bash echo kept > note.txt")
    record = session.decide(EditAction(replacement))
    assert record.action == Bash("echo kept > note.txt")
    assert record.proposed.action == Bash("rm -rf calc")
    assert (git_repo / "calc").is_dir() and (git_repo / "note.txt").read_text() == "kept\n"
    assert "note.txt" in record.diff
    session.propose()
    messages = recorder.prompts[1].messages
    assert "echo kept > note.txt" in messages[-2]["content"]
    assert "rm -rf calc" not in messages[-2]["content"]
    assert "replaced your proposed action" in messages[-1]["content"]


def test_parse_edit_accepts_any_dialect_and_json(git_repo, tmp_path, sessions):
    session, _, _ = sessions(git_repo, write_script(tmp_path / "s.jsonl", []), "text")
    assert session.parse_edit("Action: read calc/ops.py") == Read("calc/ops.py")
    assert session.parse_edit(
        '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    ) == Bash("ls")
    assert session.parse_edit(
        "<function=str_replace_editor><parameter=command>view</parameter>"
        "<parameter=path>a.py</parameter></function>"
    ) == StrReplaceEditor(command="view", path="a.py")
    assert session.parse_edit('{"kind": "bash", "command": "pwd"}') == Bash("pwd")
    with pytest.raises(ParseError):
        session.parse_edit("just words")
    with pytest.raises(ParseError):
        session.parse_edit('{"kind": "launch", "command": "x"}')


def test_undo_restores_files_and_conversation(git_repo, tmp_path, sessions):
    script = write_script(
        tmp_path / "s.jsonl",
        [
            "Thought: make a file\nAction: bash echo one > one.txt",
            f"Thought: fix\nAction: edit calc/ops.py 7 7\n{FIXED_LINE}",
            "Thought: again\nAction: bash echo two > two.txt",
        ],
    )
    session, recorder, events = sessions(git_repo, script, "text")
    for _ in range(2):
        session.decide(Approve()) if session.propose() else None
    assert (git_repo / "one.txt").exists() and FIXED_LINE in (git_repo / "calc/ops.py").read_text()

    undone = session.undo()

    assert isinstance(events[-1], StepUndone) and undone.to_index == 1
    assert undone.changed_paths == ["calc/ops.py"]
    assert BUGGY_LINE in (git_repo / "calc/ops.py").read_text()
    assert (git_repo / "one.txt").exists()
    assert [r.index for r in session.records] == [1]
    proposal = session.propose()
    assert proposal.index == 2
    after_undo = prompt_text(recorder.prompts[-1])
    assert "echo one > one.txt" in after_undo
    assert "edit calc/ops.py" not in after_undo and "The divisor" not in after_undo
    session.decide(Approve())
    assert (git_repo / "two.txt").exists()

    session.undo(0)
    assert not (git_repo / "one.txt").exists() and not (git_repo / "two.txt").exists()
    assert session.records == []
    assert git(git_repo, "status", "--porcelain") == ""


def test_undo_without_steps_says_so(git_repo, tmp_path, sessions):
    session, _, _ = sessions(git_repo, write_script(tmp_path / "s.jsonl", []), "text")
    session.start()
    with pytest.raises(ValueError, match="nothing to undo"):
        session.undo()


def test_user_command_and_message_reach_the_model_and_undo(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", ["Thought: a\nAction: bash true"] * 3)
    session, recorder, _ = sessions(git_repo, script, "text")
    session.start()
    record = session.run_user_command("echo from-user > user.txt && echo wrote")
    assert record.index == 1 and record.origin is Origin.USER
    assert "user.txt" in record.diff and record.observation.output.strip() == "wrote"
    session.add_user_message("Look at calc/ops.py first.")
    proposal = session.propose()
    text = prompt_text(recorder.prompts[0])
    assert "echo from-user > user.txt" in text and "wrote" in text
    assert "Look at calc/ops.py first." in text
    assert proposal.index == 2
    session.decide(Approve())
    session.undo(0)
    assert not (git_repo / "user.txt").exists()
    session.propose()
    assert "from-user" not in prompt_text(recorder.prompts[-1])


def test_quit_finishes_with_reason_quit(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", ["Thought: a\nAction: bash touch x.txt"])
    session, _, events = sessions(git_repo, script, "text")
    session.propose()
    assert session.decide(Quit()) is None
    assert session.finished.reason == "quit" and isinstance(events[-1], SessionFinished)
    assert not (git_repo / "x.txt").exists()
    assert session.propose() is None


def test_dialect_auto_is_detected_from_the_first_reply(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["xml"][-2:])
    session, recorder, _ = sessions(git_repo, script, "auto")
    assert session.run(AutoPolicy()).reason == "submitted"
    assert session.config.dialect == "xml"
    assert "OBSERVATION:" in prompt_text(recorder.prompts[-1])



def test_an_edit_the_dialect_cannot_express_is_described_to_the_model(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", ["Thought: wipe\nAction: bash rm calc/ops.py"] * 2)
    session, recorder, _ = sessions(git_repo, script, "text")
    session.propose()
    editor = StrReplaceEditor(command="str_replace", path="calc/ops.py", old_str=BUGGY_LINE, new_str=FIXED_LINE)
    session.decide(EditAction(editor))
    assert FIXED_LINE in (git_repo / "calc/ops.py").read_text()
    session.propose()
    text = prompt_text(recorder.prompts[1])
    assert "bash rm calc/ops.py" in text  # the model's own turn stays
    assert 'replaced your proposed action with: {"kind": "str_replace_editor"' in text
