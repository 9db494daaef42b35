"""Stuck detection: the model repeating itself is noticed, told, shown, and (headless) stopped."""

from __future__ import annotations

import json

from agent_core.actions import Bash, Search
from agent_core.events import FormatError, Notice, StepExecuted, StepRejected
from agent_core.formats.examples import EXAMPLE_HEADER
from agent_core.policy import AutoPolicy
from agent_core.prompts import format_example
from agent_core.steps import Observation, Reject
from agent_core.stored_turns import stored_turn
from agent_core.stuck import StuckDetector
from tests.test_cli import ISSUE, navtui
from tests.test_session import prompt_text, sessions, write_script  # noqa: F401 (fixture)

FIND = "find . -name '*.py' | head"
FIND_XML = (
    "I will list the Python files to find the module.\n\n"
    f"<function=bash>\n<parameter=command>{FIND}</parameter>\n</function>"
)
# What the model copied from the old toolcall format-error example, without the tags.
ECHO_TOOLCALL = '{"name": "bash", "arguments": {"command": "grep -rn \\"def parse\\" ."}}'


def out(text: str, code: int = 0) -> Observation:
    return Observation(output=text, exit_code=code)


def test_same_action_three_times_in_a_row():
    detector = StuckDetector()
    assert detector.executed(Bash("date"), out("12:00")) is None
    assert detector.executed(Bash("date"), out("12:01")) is None
    notice = detector.executed(Bash("date"), out("12:02"))
    assert "You repeated bash `date` 3 times in a row; try something else." == notice
    assert detector.count == 1


def test_same_action_and_observation_twice():
    detector = StuckDetector()
    assert detector.executed(Bash("ls"), out("a.py")) is None
    assert "same result" in detector.executed(Bash("ls"), out("a.py"))


def test_a_different_result_or_action_in_between_is_not_stuck():
    detector = StuckDetector()
    for action, seen in [(Bash("ls"), "a"), (Bash("pytest"), "1 failed"), (Bash("ls"), "a"),
                         (Bash("pytest"), "1 passed")]:
        assert detector.executed(action, out(seen)) is None
    assert detector.count == 0


def test_alternating_two_actions_three_times():
    detector = StuckDetector()
    notices = [
        detector.executed(action, out(str(n)))
        for n, action in enumerate([Bash("ls"), Search("x")] * 3)
    ]
    assert notices[:5] == [None] * 5
    assert "same two actions in turn" in notices[5] and "bash `ls`" in notices[5]


def test_reply_echoing_the_format_errors_words():
    detector = StuckDetector()
    example = format_example("toolcall")
    echo = f"{EXAMPLE_HEADER}\nI will look at it.\n{example.tools}"
    notice = detector.format_error(echo)
    assert "repeated the format error's words" in notice and "instead of acting" in notice
    assert detector.format_error("I am not sure what to do.") is None


def test_the_same_unparseable_reply_twice():
    detector = StuckDetector()
    assert detector.format_error("hmm") is None
    assert "same unparseable reply" in detector.format_error("hmm")


def test_echoing_the_rejection_feedback_and_rejecting_the_same_action_twice():
    detector = StuckDetector()
    assert detector.rejected(Bash("rm -rf build"), "do not delete the build directory") is None
    echoed = detector.executed(Bash('echo "do not delete the build directory"'), out("x"))
    assert "feedback" in echoed
    assert detector.executed(Bash("pytest"), out("ok")) is None
    detector.reset()
    assert detector.rejected(Bash("rm x"), "no") is None
    assert "same result" in detector.rejected(Bash("rm x"), "no")


def test_the_model_reads_the_notice_and_the_user_sees_it(git_repo, tmp_path, sessions):  # noqa: F811
    script = write_script(tmp_path / "s.jsonl", [FIND_XML] * 3)
    session, recorder, events = sessions(git_repo, script, "xml")
    session.run(AutoPolicy())
    notices = [e.message for e in events if isinstance(e, Notice) and e.message.startswith("stuck:")]
    assert len(notices) == 2  # steps 2 and 3 repeat step 1; no stop without max_stuck
    assert "try something else" in prompt_text(recorder.prompts[2])
    assert "try something else" not in prompt_text(recorder.prompts[1].__class__(
        messages=recorder.prompts[1].messages[:-1]))


def test_the_user_rejection_echo_reaches_the_model(git_repo, tmp_path, sessions):  # noqa: F811
    feedback = "stop listing files and read average.py"
    replies = [FIND_XML, FIND_XML.replace(FIND, f'echo "{feedback}"'), FIND_XML]
    session, recorder, events = sessions(git_repo, write_script(tmp_path / "s.jsonl", replies), "xml")
    session.propose()
    session.decide(Reject(feedback))
    session.propose()
    record = session.decide(AutoPolicy().decide(session.pending))
    assert any(isinstance(e, StepRejected) for e in events)
    assert "as a command" in stored_turn(record).observation


def run_auto(tmp_path, git_repo, dialect: str, outputs: list[str], *flags: str):
    script = write_script(tmp_path / "loop.jsonl", outputs)
    result = navtui(
        "--auto", "--json", "--script", str(script), "--dialect", dialect, "--issue", ISSUE,
        *flags, str(git_repo),
    )
    return result, [json.loads(line) for line in result.stdout.splitlines()]


def test_find_loop_stops_as_stuck_instead_of_running_eight_times(git_repo, tmp_path):
    result, events = run_auto(tmp_path, git_repo, "xml", [FIND_XML] * 8)
    assert result.returncode == 2, result.stderr
    executed = [e for e in events if e["type"] == "StepExecuted"]
    assert len(executed) == 3  # the 2nd repeat hits --max-stuck's default of 2
    assert any(e["type"] == "Notice" and e["message"].startswith("stuck:") for e in events)
    assert events[-1]["type"] == "SessionFinished" and events[-1]["reason"] == "stuck"
    assert "--max-stuck 2" in events[-1]["message"]


def test_echo_loop_of_the_example_command_stops_as_stuck(git_repo, tmp_path):
    result, events = run_auto(tmp_path, git_repo, "toolcall", [ECHO_TOOLCALL] * 8, "--max-stuck", "1")
    assert result.returncode == 2, result.stderr
    executed = [e for e in events if e["type"] == "StepExecuted"]
    # grep also reads the session log under .git, so each result differs: the 3rd run is stuck.
    assert len(executed) == 3
    assert executed[0]["record"]["action"]["command"] == 'grep -rn "def parse" .'
    assert events[-1]["reason"] == "stuck"


def test_echo_of_the_format_errors_words_stops_as_stuck(git_repo, tmp_path):
    echo = f"{EXAMPLE_HEADER}\nI will look at the code."
    result, events = run_auto(tmp_path, git_repo, "toolcall", [echo] * 8)
    assert result.returncode == 2, result.stderr
    errors = [e for e in events if e["type"] == "FormatError"]
    assert len(errors) == 2 and "repeated the format error's words" in errors[-1]["observation"]
    assert events[-1]["reason"] == "stuck"


def test_a_model_copying_the_example_runs_it_and_stops_as_stuck_when_it_keeps_on(git_repo, tmp_path):
    """The example is a real action (view the repository): copied once it runs, which is a fine
    first step; copied again and again it is a repeated action with the same result."""
    example = format_example("toolcall").reply
    result, events = run_auto(tmp_path, git_repo, "toolcall", ["The bug is in ops.py.", *[example] * 7])
    assert result.returncode == 2, result.stderr
    [error] = [e for e in events if e["type"] == "FormatError"]
    assert '{"name": "str_replace_editor", "arguments": {"command": "view", "path": "/testbed"}}' in error["observation"]
    executed = [e for e in events if e["type"] == "StepExecuted"]
    assert len(executed) == 3 and executed[0]["record"]["action"] == {
        "kind": "str_replace_editor", "command": "view", "path": "/testbed"}
    assert "calc" in executed[0]["record"]["observation"]["output"]
    assert events[-1]["reason"] == "stuck"


def test_interactive_runs_are_told_but_not_stopped(git_repo, tmp_path, sessions):  # noqa: F811
    script = write_script(tmp_path / "s.jsonl", [FIND_XML] * 4)
    session, _, events = sessions(git_repo, script, "xml", max_stuck=None)
    finished = session.run(AutoPolicy())
    assert finished.reason == "script_exhausted"
    assert sum(isinstance(e, StepExecuted) for e in events) == 4
    assert not any(isinstance(e, FormatError) for e in events)


def test_a_resumed_auto_run_stops_when_stuck_too(git_repo, tmp_path):
    first, events = run_auto(tmp_path, git_repo, "xml", [FIND_XML] * 2, "--max-stuck", "9")
    assert events[-1]["reason"] == "script_exhausted", first.stderr
    session_id = events[0]["session_id"]
    more = write_script(tmp_path / "more.jsonl", [FIND_XML] * 8)
    resumed = navtui("--auto", "--json", "--script", str(more), "--resume", session_id,
                     "--max-new-tokens", "99", str(git_repo))
    assert resumed.returncode == 2, resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert events[0]["config"]["max_stuck"] == 2 and events[0]["config"]["max_new_tokens"] == 99
    assert events[-1]["reason"] == "stuck"


def test_a_rejected_step_still_tells_the_model_its_notice(git_repo, tmp_path, sessions):  # noqa: F811
    untagged = '{"name": "bash", "arguments": {"command": "ls"}}'
    script = write_script(tmp_path / "s.jsonl", [untagged])
    session, _, _ = sessions(git_repo, script, "toolcall")
    session.propose()
    record = session.decide(Reject("not now"))
    observation = stored_turn(record).observation
    assert "not now" in observation and "untagged tool call accepted" in observation
