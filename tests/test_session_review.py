"""Review on submit (SWE-smith's loop): the first submit is answered with the review message and
the session's diff; the model cleans up and submits again, which ends the session."""

from __future__ import annotations

from agent_core.events import SessionFinished, StepExecuted
from agent_core.policy import AutoPolicy
from agent_core.steps import StepStatus
from tests.test_session import prompt_text, sessions, write_script  # noqa: F401 (sessions: fixture)

CREATE = ('<function=str_replace_editor>\n<parameter=command>create</parameter>\n'
          '<parameter=path>/testbed/reproduce.py</parameter>\n<parameter=file_text>print(1)\n'
          '</parameter>\n</function>')
REMOVE = "<function=bash>\n<parameter=command>rm /testbed/reproduce.py</parameter>\n</function>"
SUBMIT = "<function=submit>\n</function>"


def test_first_submit_gets_the_review_and_the_second_ends(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [CREATE, SUBMIT, REMOVE, SUBMIT])
    session, recorder, events = sessions(git_repo, script, "xml", submit_review=True)
    finished = session.run(AutoPolicy())
    assert finished.reason == "submitted" and "reproduce.py" not in finished.patch

    executed = [e.record for e in events if isinstance(e, StepExecuted)]
    review = executed[1]
    assert (review.status, review.review_stage) == (StepStatus.REVIEWED, 0)
    assert review.observation.output.startswith("Thank you for your work on this issue.")
    assert "+++ b/reproduce.py" in review.observation.output
    assert executed[3].status is StepStatus.EXECUTED and executed[3].review_stage is None
    assert [e for e in events if isinstance(e, SessionFinished)] == [finished]
    # The model read the review (in SWE-smith's envelope) before cleaning up.
    third = prompt_text(recorder.prompts[2])
    assert "OBSERVATION:\nThank you for your work on this issue." in third
    assert "\r\n<diff>\r\ndiff --git a/reproduce.py b/reproduce.py\r\n" in third


def test_without_review_the_first_submit_ends(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [CREATE, SUBMIT])
    session, _, _ = sessions(git_repo, script, "xml", submit_review=False)
    finished = session.run(AutoPolicy())
    assert finished.reason == "submitted" and "reproduce.py" in finished.patch


def test_the_text_profile_has_no_review(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", ["Thought: done\nAction: submit"])
    session, _, _ = sessions(git_repo, script, "text", submit_review=True)
    assert session.run(AutoPolicy()).reason == "submitted"


def test_undoing_the_review_step_lets_the_next_submit_be_reviewed_again(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [CREATE, SUBMIT, SUBMIT])
    session, _, events = sessions(git_repo, script, "xml", submit_review=True)
    session.start()
    for _ in range(2):
        session.decide(AutoPolicy().decide(session.propose()))
    assert session.finished is None
    session.undo(1)
    session.decide(AutoPolicy().decide(session.propose()))
    assert session.finished is None and session.records[-1].status is StepStatus.REVIEWED
