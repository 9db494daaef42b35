"""Servers as they fail inside a reply: `navtui --auto` against real local HTTP servers speaking
each family's wire shapes (tests.fixtures.server_families). Every fault of a stream is a fault of
the turn (retried after a pause, then a resumable stop, exit 2), never a changed action or a
traceback; a reply cut by a full window is said to the user and the model; parallel tool calls
are read and the model told which did not run; waits are events; streams are bounded by
`--max-time` and by byte caps."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_core.backends.faults import ServerUnavailable, context_too_long
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.events import Waiting
from agent_core.formats.common import extra_actions_notice
from agent_core.turn_retry import WINDOW_FULL_TOLD
from tests.fixtures.server_families import (
    LLAMACPP,
    OLLAMA_CHAT_CONTEXT_ERROR,
    SGLANG,
    VLLM,
    _chunk,
    llamacpp_props,
    vllm_engine_error,
    vllm_tokenize,
    window_full_reply,
)
from tests.fixtures.servers import Reply, ScriptedHTTPServer, content_chunk, sse
from tests.test_cli import ISSUE, navtui
from tests.test_server_families import CHAT
from tests.test_server_faults import events, notices, run_auto, submit_reply


def bash_reply(command: str) -> Reply:
    return VLLM.reply("Look.", "bash", {"command": command})


def proposed_commands(stdout: str) -> list[str]:
    return [e["step"]["raw"] for e in events(stdout) if e.get("type") == "StepProposed"]


def assert_no_traceback(result: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr[-2000:]


def test_a_chunk_that_does_not_parse_restarts_the_turn_and_never_changes_the_action(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    """The issue's case: the chunk holding `/` was lost and `testbed/calc.py` ran instead."""
    call = '<tool_call>\n{"name": "bash", "arguments": {"command": "cat '
    broken = Reply(body=[*sse(content_chunk(call)),
                         'data: {"choices": [{"index": 0, "delta": {"content": "/\n\n',
                         *sse(content_chunk('testbed/calc/ops.py"}}\n</tool_call>', "stop"))])
    scripted_http.queue(broken, bash_reply("cat /testbed/calc/ops.py"), submit_reply(),
                        submit_reply())
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_no_traceback(result)
    said = notices(result.stdout)
    assert any("not JSON" in n and "step 1 starts over" in n for n in said), said
    first = proposed_commands(result.stdout)[0]
    assert '"cat /testbed/calc/ops.py"' in first
    waits = [e for e in events(result.stdout) if e.get("type") == "Waiting"]
    assert any(w["reason"] == "retrying step 1" and w["next_try_s"] > 0 for w in waits)


def test_a_reply_damaged_every_time_stops_resumable_with_exit_2(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    scripted_http.queue(Reply(body=["data: {not json\n\n"]))
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert_no_traceback(result)
    finished = events(result.stdout)[-1]
    assert finished["reason"] == "server_unavailable" and "--resume" in finished["message"]
    assert len(scripted_http.requests) == 3


def test_vllms_engine_error_event_mid_stream_is_retried(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    scripted_http.queue(vllm_engine_error(), submit_reply(), submit_reply())
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert any("reported an error mid-stream: EngineCore encountered an issue" in n
               for n in notices(result.stdout))


def test_a_stall_past_the_request_timeout_is_retried_and_said_while_it_lasts(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    stalled = Reply(body=[*sse(content_chunk("<tool_call>\n")), 30.0])
    scripted_http.queue(stalled, submit_reply(), submit_reply())
    result = run_auto(scripted_http, git_repo, "--request-timeout", "6")
    assert result.returncode == 0, result.stdout + result.stderr
    assert any("sent nothing for 6 s mid-reply" in n and "starts over" in n
               for n in notices(result.stdout))
    waits = [e for e in events(result.stdout) if e.get("type") == "Waiting"]
    assert any(w["reason"] == "the server stopped sending" and w["waited_s"] >= 5 for w in waits)


def test_a_reply_cut_by_a_full_window_is_said_trimmed_for_and_told_to_the_model(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    """vLLM clamps max_tokens to the room left; llama.cpp stops at n_ctx: `finish_reason:
    "length"` below max_tokens. It was read as the model's bad JSON three times in a row."""
    scripted_http.queue(
        bash_reply("seq 1 4000"),
        window_full_reply('<tool_call>\n{"name": "bash", "argu', 6000, 24),
        bash_reply("echo next"),
        submit_reply(),
        submit_reply(),
    )
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    said = [n for n in notices(result.stdout) if n.startswith("window full")]
    assert len(said) == 1 and "cut the reply at 24 tokens, below max_tokens" in said[0]
    assert "(6024 tokens) is full" in said[0] and "retried step 2" in said[0]
    assert not [e for e in events(result.stdout) if e.get("type") == "FormatError"]
    cut, retried = scripted_http.requests[1], scripted_http.requests[2]
    assert len(json.dumps(retried.body["messages"])) < 0.8 * len(json.dumps(cut.body["messages"]))
    after = json.dumps(scripted_http.requests[3].body["messages"])
    assert json.dumps(WINDOW_FULL_TOLD)[1:-1] in after, "the model is told too"


def test_parallel_tool_calls_are_read_whole_and_the_model_told_the_others_did_not_run(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    """vLLM's hermes parser streams each call under its own index; the stop at the first
    `</tool_call>` used to end the stream there."""
    def call(index: int, command: str) -> list[dict]:
        head = _chunk({"tool_calls": [{"index": index, "id": f"call-{index}", "type": "function",
                                       "function": {"name": "bash"}}]})
        args = _chunk({"tool_calls": [{"index": index, "function": {
            "arguments": json.dumps({"command": command})}}]})
        return [head, args]

    two = Reply(body=sse(*call(0, "echo one"), *call(1, "echo two"), _chunk({}, "tool_calls"),
                         "[DONE]"))
    scripted_http.queue(two, submit_reply(), submit_reply())
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    raw = proposed_commands(result.stdout)[0]
    assert raw.count("<tool_call>") == 2 and "echo two" in raw
    executed = [e for e in events(result.stdout) if e.get("type") == "StepExecuted"]
    assert executed[0]["record"]["observation"]["output"].strip() == "one"
    told = json.dumps(scripted_http.requests[1].body["messages"])
    # The words the replay backend's turns get: the one parser of the dialect says them.
    assert json.dumps(extra_actions_notice(2, "bash"))[1:-1] in told


def test_ollamas_chat_refusal_is_a_context_refusal() -> None:
    """Quoted from Ollama's `llm/llama_server.go` (context shift off): it was exit 1."""
    message = json.loads(OLLAMA_CHAT_CONTEXT_ERROR.body[0])["error"]["message"]
    assert message.startswith("the prompt is longer than the context length currently available")
    found = context_too_long(message, json.loads(OLLAMA_CHAT_CONTEXT_ERROR.body[0]))
    assert found is not None and (found.limit, found.prompt_tokens) == (None, None)


def test_ollamas_chat_refusal_trims_and_retries(git_repo: Path,
                                                 scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(bash_reply("seq 1 4000"), OLLAMA_CHAT_CONTEXT_ERROR, submit_reply(),
                        submit_reply())
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert any("refused the prompt as too long" in n for n in notices(result.stdout))


def test_a_busy_wait_is_an_event_with_its_reason_and_next_try(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    scripted_http.queue(Reply(status=429, headers={"Retry-After": "1.5",
                                                   "Content-Type": "application/json"},
                              body=['{"error": {"message": "queue full"}}']),
                        submit_reply(), submit_reply())
    result = run_auto(scripted_http, git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    waits = [e for e in events(result.stdout) if e.get("type") == "Waiting"]
    assert waits and waits[0]["reason"] == "server busy (HTTP 429)"
    assert 1.5 <= waits[0]["next_try_s"] <= 2.0


def test_keep_alive_comments_do_not_keep_a_reply_past_max_time(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    scripted_http.queue(Reply(body=[*sse(content_chunk("<tool_call>\n")),
                                    *[": ping\n\n", 0.5] * 120]))
    started = time.monotonic()
    result = run_auto(scripted_http, git_repo, "--max-time", "4")
    assert result.returncode == 2, result.stdout + result.stderr
    finished = events(result.stdout)[-1]
    assert finished["reason"] == "limit" and "--max-time" in finished["message"]
    assert time.monotonic() - started < 40


def test_a_gzip_reply_without_newlines_is_capped_after_decompression(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    """150 KB of gzip that inflates to 150 MB with no newline grew the process past 500 MB."""
    bomb = gzip.compress(b"data: " + b"x" * 150 * 2**20, compresslevel=9)
    assert len(bomb) < 200 * 1024
    scripted_http.queue(Reply(headers={"Content-Type": "text/event-stream",
                                       "Content-Encoding": "gzip"}, body=[bomb]))
    command = [sys.executable, "-m", "app.cli", "--auto", "--json", "--base-url",
               scripted_http.base_url, "--model", "navigator", "--dialect", "toolcall",
               "--issue", ISSUE, str(git_repo)]
    measure = ("import json, resource, subprocess, sys; "
               "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "print(json.dumps([r.returncode, r.stdout, r.stderr, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    ran = subprocess.run([sys.executable, "-c", measure, *command], capture_output=True,
                         text=True, timeout=120)
    code, stdout, stderr, max_rss_kib = json.loads(ran.stdout)
    assert code == 2, stdout + stderr
    assert "Traceback" not in stderr
    assert any("longer than 4 MiB" in n for n in notices(stdout))
    assert max_rss_kib < 400 * 1024, f"the process grew to {max_rss_kib // 1024} MiB"


def test_the_listing_answering_503_is_waited_for_and_sglang_gets_its_adapter_name(
    scripted_http: ScriptedHTTPServer,
) -> None:
    """A server loading (the real llama-server answered 503 for ~6.5 s) or a router warming
    up: the bare adapter name sent to SGLang ran the base model silently."""
    scripted_http.models = Reply(status=503, headers={"Content-Type": "application/json"},
                                 body=['{"error": {"message": "Loading model"}}'])
    threading.Timer(1.5, lambda: SGLANG.serve(scripted_http)).start()
    scripted_http.queue(SGLANG.reply("ok", "submit", {}))
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b", backoff=0.2)
    waits: list[Waiting] = []
    backend.attach("session-1", waits.append)
    list(backend.stream(CHAT))
    assert scripted_http.requests[0].body["model"] == "Qwen/Qwen3-8B:navigator-8b"
    assert waits and all("loading (HTTP 503 on /v1/models)" in w.reason for w in waits)
    assert len(scripted_http.gets) >= 3


def test_a_listing_still_503_at_the_deadline_is_server_unavailable_not_a_bare_name(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.models = Reply(status=503, headers={"Content-Type": "application/json"},
                                 body=['{"error": {"message": "Loading model"}}'])
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b", backoff=0.1, busy_deadline=1)
    assert backend.notices == [], "nothing is said from a listing that is not real"
    with pytest.raises(ServerUnavailable, match="loading"):
        list(backend.stream(CHAT))
    assert scripted_http.requests == []


def test_the_window_the_server_lists_is_the_window_prompts_are_fitted_to(
    git_repo: Path, scripted_http: ScriptedHTTPServer
) -> None:
    VLLM.serve(scripted_http)
    scripted_http.models.body = [scripted_http.models.body[0].replace("16384", "8192")]
    scripted_http.queue(submit_reply(), submit_reply())
    result = navtui("--auto", "--json", "--base-url", scripted_http.base_url, "--model",
                    "navigator-8b", "--dialect", "toolcall", "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stdout + result.stderr
    assert any("the server's context window is 8192 tokens" in n for n in notices(result.stdout))
    usage = [e for e in events(result.stdout) if e.get("type") == "UsageReported"]
    assert usage[0]["context_limit"] == 8192


def test_llamacpp_states_its_window_at_props_and_counts_with_its_tokenizer(
    scripted_http: ScriptedHTTPServer,
) -> None:
    LLAMACPP.serve(scripted_http)
    scripted_http.pages["/props"] = llamacpp_props(4096)
    scripted_http.pages["/apply-template"] = Reply(
        headers={"Content-Type": "application/json"},
        body=[json.dumps({"prompt": "<|im_start|>user\nfix the failing test<|im_end|>\n"})])
    scripted_http.pages["/tokenize"] = Reply(headers={"Content-Type": "application/json"},
                                             body=[json.dumps({"tokens": list(range(17))})])
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b")
    assert backend.notices and backend.context_window == 4096
    assert backend.count_tokens(CHAT) == 17 and backend.exact_counts
    rendered = [r for r in scripted_http.page_requests if r.path == "/apply-template"]
    assert rendered[0].body["messages"] == CHAT.messages


def test_vllm_counts_a_chat_prompt_at_tokenize(scripted_http: ScriptedHTTPServer) -> None:
    VLLM.serve(scripted_http)
    scripted_http.pages["/tokenize"] = vllm_tokenize(1234)
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b")
    assert backend.notices, "the session reads the listing when it starts"
    assert backend.count_tokens(CHAT) == 1234 and backend.exact_counts
    sent = [r for r in scripted_http.page_requests if r.path == "/tokenize"][0].body
    assert sent["messages"] == CHAT.messages and sent["add_generation_prompt"] is True
    assert sent["tools"] == CHAT.tools and sent["model"] == "navigator-8b"


def test_without_a_tokenize_endpoint_the_estimate_stays(scripted_http: ScriptedHTTPServer) -> None:
    VLLM.serve(scripted_http)
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b")
    assert backend.notices
    assert backend.count_tokens(CHAT) > 0 and not backend.exact_counts


def test_each_request_names_the_session_for_session_affine_routers(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.queue(VLLM.reply("ok", "submit", {}))
    backend = OpenAIBackend(scripted_http.base_url, "navigator-8b")
    backend.attach("20260101-000000-abc123", lambda _: None)
    list(backend.stream(CHAT))
    request = scripted_http.requests[0]
    assert request.body["user"] == "20260101-000000-abc123"
    assert request.headers["X-Session-ID"] == "20260101-000000-abc123"
