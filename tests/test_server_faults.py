"""A server fault costs a retry, not the session: `navtui --auto` against real local servers
that refuse a prompt as too long, drop the connection mid-reply, or stay busy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.executor import Executor
from agent_core.policy import AutoPolicy
from agent_core.session import Session, SessionConfig
from agent_core.workspace import Workspace
from agent_core.finish import FinishReason
from tests.fixtures.server_families import LLAMACPP, OLLAMA, SGLANG, VLLM
from tests.fixtures.servers import Reply, ScriptedHTTPServer, content_chunk, sse
from tests.test_cli import ISSUE, navtui


def submit_reply() -> Reply:
    return VLLM.reply("All done.", "submit", {})


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def notices(stdout: str) -> list[str]:
    return [e["message"] for e in events(stdout) if e.get("type") == "Notice"]


def run_auto(server: ScriptedHTTPServer, repo: Path, *extra: str) -> subprocess.CompletedProcess:
    return navtui("--auto", "--json", "--base-url", server.base_url, "--model", "navigator",
                  "--dialect", "toolcall", *extra, "--issue", ISSUE, str(repo))


@pytest.mark.parametrize("family", [VLLM, SGLANG, LLAMACPP, OLLAMA], ids=lambda f: f.name)
def test_a_context_refusal_trims_the_prompt_and_retries_once(git_repo, scripted_http, family):
    assert family.context_error is not None
    scripted_http.queue(
        family.reply("Look at a long listing.", "bash", {"command": "seq 1 4000"}),
        family.context_error(1024 + 3000, 6000),
        submit_reply(),
        submit_reply(),
    )
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    said = [n for n in notices(result.stdout) if "refused the prompt as too long" in n]
    assert len(said) == 1 and "and retried step 2" in said[0]
    if family is not OLLAMA:  # Ollama's refusal gives no counts
        assert "context window is 4024 tokens" in said[0] and "counted 6000" in said[0]
    refused, retried = scripted_http.requests[1], scripted_http.requests[2]
    size = len(json.dumps(retried.body["messages"]))
    assert size < 0.8 * len(json.dumps(refused.body["messages"]))
    assert retried.body["messages"][1] == refused.body["messages"][1], "the issue stays"


def test_a_context_refusal_after_the_trim_stops_with_a_limit(git_repo, scripted_http):
    assert LLAMACPP.context_error is not None
    scripted_http.queue(
        LLAMACPP.reply("Look.", "bash", {"command": "seq 1 4000"}),
        LLAMACPP.context_error(1024 + 3000, 6000),
    )
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 2, result.stdout + result.stderr
    finished = events(result.stdout)[-1]
    assert finished["reason"] == "limit" and "context window full" in finished["message"]
    assert len(scripted_http.requests) == 3  # the turn, the refusal, one retry


def test_a_stream_dropped_mid_reply_starts_the_turn_over(git_repo, scripted_http):
    dropped = Reply(headers={"Content-Type": "text/event-stream", "Content-Length": "100000"},
                    body=sse(content_chunk("<tool_call>\n{\"name\": \"bash\", ")))
    scripted_http.queue(dropped, submit_reply(), submit_reply())
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    said = notices(result.stdout)
    assert any("broke mid-stream" in n and "step 1 starts over" in n for n in said)
    turns = [e for e in events(result.stdout) if e.get("type") == "TurnStarted"]
    assert [t["index"] for t in turns][:2] == [1, 1], "front ends are told to drop the partial"


def test_a_connection_that_keeps_dropping_stops_with_exit_2_and_stays_resumable(
    git_repo, scripted_http
):
    dropped = Reply(headers={"Content-Type": "text/event-stream", "Content-Length": "100000"},
                    body=sse(content_chunk("partial")))
    scripted_http.queue(dropped)
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 2, result.stdout + result.stderr
    finished = events(result.stdout)[-1]
    assert finished["reason"] == "server_unavailable" and "--resume" in finished["message"]
    assert len(scripted_http.requests) == 3
    listed = navtui("sessions", "--json", str(git_repo))
    assert "server_unavailable" in listed.stdout
    scripted_http.replies.clear()
    scripted_http.queue(submit_reply(), submit_reply())
    session_id = json.loads(listed.stdout.splitlines()[0])["id"]
    resumed = navtui("--auto", "--json", "--base-url", scripted_http.base_url, "--model",
                     "navigator", "--dialect", "toolcall", "--resume", session_id, str(git_repo))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_a_server_busy_past_the_deadline_stops_the_session_with_a_named_reason(
    git_repo: Path, scripted_http: ScriptedHTTPServer
):
    scripted_http.queue(Reply(status=503, headers={"Retry-After": "0.2", **SGLANG.busy.headers},
                              body=SGLANG.busy.body))
    SGLANG.serve(scripted_http)
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b", busy_deadline=0.8)
    session = Session(
        workspace=Workspace.open(git_repo),
        executor=Executor(git_repo, path_alias="/testbed"),
        backend=backend,
        issue=ISSUE,
        config=SessionConfig(dialect="toolcall", path_alias="/testbed"),
    )
    try:
        finished = session.run(AutoPolicy())
    finally:
        session.close()
    assert finished.reason == "server_unavailable"
    assert finished.message.startswith("server busy (HTTP 503): ") and "The server is busy" in (
        finished.message)
    assert FinishReason(finished.reason).exit_code == 2, "a transient fault is never exit 1"
    assert len(scripted_http.requests) >= 2
