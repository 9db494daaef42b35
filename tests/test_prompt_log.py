"""The log records what the model saw: each turn's prompt rebuilt from the log alone equals what
the backend received (hf: the rendered string; openai: the request body), trimming included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.backends.chat_template import render_prompt
from agent_core.backends.identity import text_sha256
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.events import PromptSent
from agent_core.executor import Executor
from agent_core.learn.history import Label, model_turns
from agent_core.backends.chat_template import template_kwargs
from agent_core.prompt_log import request_sha256
from agent_core.session import Session, SessionConfig
from agent_core.steps import Approve, Reject
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from agent_core.workspace import Workspace
from tests.fixtures.servers import Reply, content_chunk, sse, usage_chunk

ISSUE = "average([2, 4, 6]) returns 3 instead of 4."


def logged(repo: Path, backend, **config) -> tuple[Session, Path, list]:
    session = Session(
        workspace=Workspace.open(repo),
        executor=Executor(repo, command_timeout=30.0),
        backend=backend,
        issue=ISSUE,
        config=SessionConfig(**config),
    )
    log = repo / ".git" / "navtui" / "sessions" / f"{session.id}.jsonl"
    session.subscribe(TrajectoryWriter(log))
    events: list = []
    session.subscribe(events.append)
    return session, log, events


@pytest.mark.slow
def test_hf_prompts_rebuilt_from_the_log_are_what_the_model_read(git_repo, tiny_model_dir):
    from agent_core.backends.hf import HFBackend

    backend = HFBackend(str(tiny_model_dir), device_map="cpu", enable_thinking=False)
    seen: dict[int, str] = {}
    session, log, _ = logged(
        git_repo, backend, dialect="toolcall", context_window=3000, max_new_tokens=4,
        max_format_errors=20,
    )
    session.subscribe(lambda e: seen.update({e.index: backend.last_rendered})
                      if isinstance(e, PromptSent) else None)
    try:
        session.start()
        for step in range(6):
            session.propose()  # the random tiny model: a format error each turn
            session.run_user_command(f"seq 1 {400 + 300 * step}")  # long outputs: trimmed
            session.add_user_message(f"message {step}")
    finally:
        session.close()

    trajectory = read_trajectory(log)
    sent = [e for e in trajectory.events if isinstance(e, PromptSent)]
    assert len(sent) == 6 and sent[0].identity["tokenizer"]["chat_template_sha256"]
    assert any(e.elided for e in sent) and any(e.cap_chars for e in sent)
    turns = model_turns(trajectory)
    assert [t.index for t in turns] == [e.index for e in sent]
    for turn in turns:
        text = render_prompt(backend.tokenizer, turn.prompt, template_kwargs(turn.identity))
        assert text == seen[turn.index]
        assert text_sha256(text) == turn.sent.sha256
        assert turn.sent.tokens == len(backend.tokenizer.encode(text, add_special_tokens=False))


def test_openai_request_bodies_rebuilt_from_the_log(git_repo, scripted_http):
    replies = [
        "Thought: look\nAction: bash ls",
        "Thought: rm\nAction: bash rm -rf calc",
        "Thought: read\nAction: read calc/ops.py",
    ]
    for text in replies:
        scripted_http.queue(Reply(body=sse(content_chunk(text), usage_chunk(50, 5), "[DONE]")))
    backend = OpenAIBackend(scripted_http.base_url, "m", max_retries=0)
    session, log, _ = logged(git_repo, backend, dialect="text", context_window=900,
                             max_new_tokens=64)
    try:
        session.start()
        session.decide(session.propose() and Approve())
        session.run_user_command("seq 1 2000")  # too long for the window: trimmed
        session.decide(session.propose() and Reject("keep the code"))
        session.decide(session.propose() and Approve())
    finally:
        session.close()

    trajectory = read_trajectory(log)
    turns = model_turns(trajectory)
    assert [t.label for t in turns] == [Label.APPROVED, Label.REJECTED, Label.APPROVED]
    assert any(t.sent.elided or t.sent.cap_chars for t in turns)
    rebuild = OpenAIBackend(scripted_http.base_url, "m")
    rebuild.attach(session.id, lambda _: None)  # requests name their session (`user`)
    for turn, request in zip(turns, scripted_http.requests, strict=True):
        path, body = rebuild.request_for(turn.prompt)
        assert request.path.endswith(path)
        assert body == request.body
        assert request_sha256(body) == turn.sent.sha256
    rebuild.close()


def test_a_log_from_before_prompt_records_still_reads(git_repo, tmp_path):
    """Older logs have no PromptSent lines: turns still come out, prompts rebuilt untrimmed."""
    from tests.test_session import make_session, write_script

    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash ls",
                                                  "Thought: done\nAction: submit"])
    session, _, _ = make_session(git_repo, script, "text")
    log = tmp_path / "old.jsonl"
    session.subscribe(TrajectoryWriter(log))
    try:
        session.decide(session.propose() and Approve())
        session.decide(session.propose() and Approve())
    finally:
        session.close()
    lines = [l for l in log.read_text().splitlines() if '"PromptSent"' not in l]
    log.write_text("\n".join(lines) + "\n")
    turns = model_turns(read_trajectory(log))
    assert [t.label for t in turns] == [Label.APPROVED, Label.APPROVED]
    assert turns[0].sent is None and turns[0].prompt.text.endswith("## Your turn:\nThought:")
    assert turns[1].prompt.text.startswith(turns[0].prompt.text[: -len("## Your turn:\nThought:")])
    assert "Action: bash ls" not in turns[0].prompt.text and "bash ls" in turns[1].prompt.text
    assert json.dumps(turns[1].prompt.text)
