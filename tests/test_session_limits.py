"""Every way a session stops on its own: step and time limits, an exhausted script, a failing
backend, a full context window; and cancelling a generation from another thread."""

from __future__ import annotations

import socket
import threading

from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.events import Notice, SessionError, SessionFinished, TokenStreamed
from agent_core.executor import Executor
from agent_core.policy import AskPolicy, AutoPolicy
from agent_core.session import Session, SessionConfig
from agent_core.steps import Reject
from agent_core.workspace import Workspace
from tests.test_session import prompt_text, sessions, write_script  # noqa: F401  (fixture)

STEP = "Thought: look around\nAction: bash echo step"
LONG_STEP = "Thought: " + "thinking slowly " * 40 + "\nAction: bash true"


def test_max_steps(git_repo, tmp_path, sessions):
    session, recorder, events = sessions(git_repo, write_script(tmp_path / "s.jsonl", [STEP] * 10), "text", max_steps=3)
    finished = session.run(AutoPolicy())
    assert finished.reason == "limit" and "--max-steps" in finished.message
    assert len(session.records) == 3 and len(recorder.prompts) == 3


def test_rejected_proposals_count_as_steps(git_repo, tmp_path, sessions):
    session, _, _ = sessions(git_repo, write_script(tmp_path / "s.jsonl", [STEP] * 10), "text", max_steps=2)
    finished = session.run(AskPolicy(lambda proposal: Reject("no")))
    assert finished.reason == "limit" and len(session.records) == 2


def test_max_time_stops_a_slow_generation(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [LONG_STEP] * 3)
    session, _, events = sessions(git_repo, script, "text", delay=0.05, max_time=0.5)
    finished = session.run(AutoPolicy())
    assert finished.reason == "limit" and "--max-time" in finished.message
    streamed = "".join(e.text for e in events if isinstance(e, TokenStreamed))
    assert 0 < len(streamed) < len(LONG_STEP)
    assert session.records == []


def test_script_exhausted(git_repo, tmp_path, sessions):
    session, _, _ = sessions(git_repo, write_script(tmp_path / "s.jsonl", [STEP] * 2), "text")
    finished = session.run(AutoPolicy())
    assert finished.reason == "script_exhausted" and "exhausted" in finished.message
    assert len(session.records) == 2


def test_patch_holds_the_work_done_before_a_limit(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", ["Thought: x\nAction: bash echo hi > hi.txt"])
    session, _, _ = sessions(git_repo, script, "text")
    finished = session.run(AutoPolicy())
    assert finished.reason == "script_exhausted"
    assert "+++ b/hi.txt" in finished.patch


def test_backend_failure_finishes_with_error(git_repo):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = OpenAIBackend(f"http://127.0.0.1:{port}", "tiny", max_retries=0, backoff=0.01)
    session = Session(
        workspace=Workspace.open(git_repo),
        executor=Executor(git_repo),
        backend=backend,
        issue="fix it",
        config=SessionConfig(dialect="toolcall"),
    )
    events: list = []
    session.subscribe(events.append)
    try:
        finished = session.run(AutoPolicy())
    finally:
        session.close()
    assert finished.reason == "error"
    errors = [e for e in events if isinstance(e, SessionError)]
    assert errors and f"127.0.0.1:{port}" in errors[0].message
    assert isinstance(events[-1], SessionFinished)


def test_cancel_from_another_thread_stops_generation(git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [LONG_STEP, STEP])
    session, _, events = sessions(git_repo, script, "text", delay=0.05)
    session.start()
    first_token = threading.Event()
    session.subscribe(lambda e: isinstance(e, TokenStreamed) and first_token.set())
    canceller = threading.Thread(target=lambda: first_token.wait(10) and session.cancel())
    canceller.start()
    assert session.propose() is None
    canceller.join()
    assert session.finished is None
    assert any(isinstance(e, Notice) and "cancelled" in e.message for e in events)
    streamed = "".join(e.text for e in events if isinstance(e, TokenStreamed))
    assert len(streamed) < len(LONG_STEP)
    proposal = session.propose()
    assert proposal is not None and proposal.step.action.command == "echo step"


def test_a_prompt_that_cannot_fit_is_never_sent(git_repo, tmp_path, sessions):
    session, recorder, _ = sessions(
        git_repo, write_script(tmp_path / "s.jsonl", [STEP]), "text", context_window=1040, max_new_tokens=1000
    )
    finished = session.run(AutoPolicy())
    assert finished.reason == "limit" and "context window" in finished.message
    assert recorder.prompts == []


def test_old_observations_are_elided_to_fit(git_repo, tmp_path, sessions):
    noisy = [f"Thought: list\nAction: bash seq {start} 400" for start in range(1, 7)]
    session, recorder, events = sessions(
        git_repo, write_script(tmp_path / "s.jsonl", noisy), "text",
        context_window=2048, max_new_tokens=256,
    )
    finished = session.run(AutoPolicy())
    assert finished.reason == "script_exhausted"
    limit = 2048 - 256
    assert all(recorder.count_tokens(p) <= limit for p in recorder.prompts)
    last = prompt_text(recorder.prompts[-1])
    assert "earlier step(s) omitted to fit the context window" in last
    assert "average([2, 4, 6])" in last  # the issue stays
    assert last.rstrip().endswith("399\n400\n\n## Your turn:\nThought:")  # the last step stays
    assert any(isinstance(e, Notice) and e.message.startswith("context:") for e in events)
