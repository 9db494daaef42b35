"""The openai backend against real sockets: a scripted local HTTP server plays each server
behaviour (streams, tool-call deltas, errors, retries, stalls, a client that leaves)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from agent_core.backends.base import Backend, BackendError, Prompt
from agent_core.backends.faults import StreamErrorEvent, StreamMalformed, StreamStalled
from agent_core.backends.openai_compat import OpenAIBackend
from tests.fixtures.servers import (
    Reply,
    ScriptedHTTPServer,
    closed_port_url,
    content_chunk,
    free_port,
    sse,
    usage_chunk,
)

CHAT = Prompt(messages=[{"role": "user", "content": "fix the failing test"}])
BASH_TOOL = {"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}}}}


def backend_for(server: ScriptedHTTPServer, **kwargs) -> OpenAIBackend:
    kwargs.setdefault("backoff", 0.01)
    return OpenAIBackend(server.base_url, "navigator", **kwargs)


def tool_delta(index: int, name: str | None = None, args: str | None = None) -> dict:
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    call = {"index": index, "type": "function", "function": function}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


def test_streams_content_and_reports_server_usage(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(body=sse(
        {"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        content_chunk("Let me "), content_chunk("look."), content_chunk("", finish="stop"),
        {"choices": [], "usage": {"prompt_tokens": 42, "completion_tokens": 3,
                                  "prompt_tokens_details": {"cached_tokens": 40}}},
        "[DONE]",
    )))
    backend = backend_for(scripted_http, api_key="sk-test-123")
    assert isinstance(backend, Backend)
    prompt = Prompt(messages=CHAT.messages, tools=[BASH_TOOL], stop_before=["Observation:"],
                    max_new_tokens=77)
    chunks = list(backend.stream(prompt))
    assert chunks == ["Let me ", "look."]
    usage = backend.last_usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.new_tokens, usage.cached_tokens) == (42, 3, 40)
    assert usage.time_to_first_token > 0
    request = scripted_http.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test-123"
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["model"] == "navigator"
    assert request.body["messages"] == CHAT.messages
    assert request.body["tools"] == [BASH_TOOL]
    assert request.body["stop"] == ["Observation:"]
    assert request.body["max_tokens"] == 77
    assert "chat_template_kwargs" not in request.body


def test_tool_call_deltas_become_qwen3_text(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(body=sse(
        {"choices": [{"index": 0, "delta": {"reasoning_content": "List the files."}}]},
        tool_delta(0, name="bash"),
        tool_delta(0, args='{"comm'),
        tool_delta(0, args='and": "ls"}'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        usage_chunk(30, 12),
    )))
    backend = backend_for(scripted_http, thinking=True)
    chunks = list(backend.stream(Prompt(messages=CHAT.messages, tools=[BASH_TOOL],
                                        stop_after=["</tool_call>"])))
    assert len(chunks) > 1
    assert "".join(chunks) == (
        '<think>\nList the files.\n</think>\n\n'
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
    )
    assert backend.last_usage is not None and backend.last_usage.new_tokens == 12
    assert scripted_http.requests[0].body["chat_template_kwargs"] == {"enable_thinking": True}


def test_text_prompt_uses_legacy_completions(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(body=sse(
        {"choices": [{"index": 0, "text": "Thought: read it\n"}]},
        {"choices": [{"index": 0, "text": "Action: read calc/ops.py", "finish_reason": "stop"}]},
    )))
    backend = backend_for(scripted_http)
    text = "".join(backend.stream(Prompt(text="Issue: ...\n", stop_before=["Observation:"])))
    assert text == "Thought: read it\nAction: read calc/ops.py"
    request = scripted_http.requests[0]
    assert request.path == "/v1/completions"
    assert request.body["prompt"] == "Issue: ...\n"
    assert "messages" not in request.body


def test_stop_strings_enforced_client_side(scripted_http: ScriptedHTTPServer) -> None:
    """A server that ignores `stop`: the text is cut anyway and the stream is left early."""
    scripted_http.queue(Reply(body=[
        *sse(content_chunk("Thought: x\nAction: bash ls\nObs"), content_chunk("ervation: a.py")),
        5.0,
        *sse(content_chunk("never read")),
    ]))
    backend = backend_for(scripted_http)
    started = time.monotonic()
    text = "".join(backend.stream(Prompt(text="p", stop_before=["Observation:"])))
    assert text == "Thought: x\nAction: bash ls\n"
    assert time.monotonic() - started < 3
    deadline = time.monotonic() + 3
    while scripted_http.requests[0].disconnected_at is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert scripted_http.requests[0].disconnected_at is not None


def test_http_500_carries_the_server_message(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(status=500, headers={"Content-Type": "application/json"},
                              body=['{"detail": "CUDA out of memory"}']))
    backend = backend_for(scripted_http)
    with pytest.raises(BackendError, match=r"HTTP 500: CUDA out of memory; check the server's log"):
        list(backend.stream(CHAT))
    assert len(scripted_http.requests) == 1


def test_429_then_200_is_retried(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(
        Reply(status=429, headers={"Retry-After": "0"}, body=['{"error": {"message": "slow"}}']),
        Reply(body=sse(content_chunk("ok", finish="stop"))),
    )
    backend = backend_for(scripted_http, backoff=30.0)
    started = time.monotonic()
    assert "".join(backend.stream(CHAT)) == "ok"
    assert time.monotonic() - started < 10, "Retry-After: 0 must win over the 30 s backoff"
    assert len(scripted_http.requests) == 2


def test_503_retries_then_gives_up(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(status=503, body=['{"error": {"message": "loading model"}}']))
    backend = backend_for(scripted_http, max_retries=2)
    with pytest.raises(BackendError, match=r"still busy after 2 retries \(HTTP 503: loading model"):
        list(backend.stream(CHAT))
    assert len(scripted_http.requests) == 3


def test_auth_error_names_the_env_vars_and_hides_the_key(
    scripted_http: ScriptedHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAVTUI_API_KEY", "sk-secret-from-env")
    scripted_http.queue(Reply(status=401, body=['{"error": "bad key sk-secret-from-env"}']))
    backend = backend_for(scripted_http)
    assert "sk-secret" not in repr(backend) and "sk-secret" not in str(backend)
    with pytest.raises(BackendError) as caught:
        list(backend.stream(CHAT))
    assert "NAVTUI_API_KEY" in str(caught.value)
    assert "sk-secret" not in str(caught.value)
    assert scripted_http.requests[0].headers["Authorization"] == "Bearer sk-secret-from-env"


def test_server_down_says_which_url_and_how_to_start_vllm() -> None:
    url = closed_port_url()
    backend = OpenAIBackend(url, "navigator-8b", backoff=0.01)
    with pytest.raises(BackendError) as caught:
        list(backend.stream(CHAT))
    message = str(caught.value)
    assert url in message and "connection refused" in message
    assert "vllm serve" in message and "--enable-lora --lora-modules" in message


def test_server_down_hint_names_the_model_that_was_asked_for() -> None:
    with pytest.raises(BackendError) as caught:
        list(OpenAIBackend(closed_port_url(), "my-model", backoff=0.01).stream(CHAT))
    message = str(caught.value)
    assert "`my-model`" in message and "vllm serve my-model" in message
    assert "navigator-8b" not in message


def test_refused_connections_are_retried_until_the_server_is_up() -> None:
    port = free_port()
    started: list[ScriptedHTTPServer] = []

    def start_late() -> None:
        server = ScriptedHTTPServer(port)
        server.queue(Reply(body=sse(content_chunk("up", finish="stop"))))
        started.append(server)

    timer = threading.Timer(0.3, start_late)
    timer.start()
    try:
        backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1", "m", backoff=0.5)
        assert "".join(backend.stream(CHAT)) == "up"
    finally:
        timer.join()
        for server in started:
            server.stop()


def test_malformed_error_event_becomes_a_clear_error(scripted_http: ScriptedHTTPServer) -> None:
    """`transformers serve` writes `{"error": "<msg>"}` without escaping the message."""
    scripted_http.queue(Reply(body=[
        *sse(content_chunk("<tool_call>\n")),
        'data: {"error": "Failed to parse tool call: "arguments" is not an object"}\n\n',
    ]))
    backend = backend_for(scripted_http)
    received = []
    with pytest.raises(BackendError, match=r'mid-stream: Failed to parse tool call: "arguments"'):
        for chunk in backend.stream(CHAT):
            received.append(chunk)
    assert received == ["<tool_call>\n"]


def test_unparseable_tool_call_error_gives_back_the_models_text(
    scripted_http: ScriptedHTTPServer,
) -> None:
    """`transformers serve` reports a malformed tool call as an error event with raw newlines;
    the model's text is recovered so the dialect parser can tell the model what went wrong."""
    scripted_http.queue(Reply(body=[
        *sse({"choices": [{"index": 0, "delta": {"reasoning_content": "\n\n"}}]}),
        'data: {"error": "json parser could not parse region as JSON.\n'
        "Content: '\\n{\"name\": \"arguments\": \"ls\"}}\\n'\n"
        "Error: Expecting ',' delimiter: line 2 column 21 (char 21)\"}\n\n",
    ]))
    backend = backend_for(scripted_http)
    text = "".join(backend.stream(Prompt(messages=CHAT.messages, stop_after=["</tool_call>"])))
    assert text == '<tool_call>\n{"name": "arguments": "ls"}}\n</tool_call>'


def test_a_chunk_that_is_not_json_and_named_error_events_are_faults_of_the_turn(
    scripted_http: ScriptedHTTPServer,
) -> None:
    """Skipping a damaged chunk once ran `testbed/calc.py` where the model wrote
    `/testbed/calc.py`: a chunk that does not parse discards the reply, never a part of it."""
    scripted_http.queue(
        Reply(body=[": keep-alive\n\n", *sse(content_chunk('{"path": "')),
                    'data: {"choices": [{"index": 0, "delta": {"content": "/te\n\n',
                    *sse(content_chunk("stbed/calc.py\"}", finish="stop"))]),
        Reply(body=["event: error\ndata: model crashed\n\n"]),
    )
    backend = backend_for(scripted_http)
    with pytest.raises(StreamMalformed, match="not JSON"):
        list(backend.stream(CHAT))
    with pytest.raises(StreamErrorEvent, match="mid-stream: model crashed"):
        list(backend.stream(CHAT))


def test_stall_becomes_a_read_timeout(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(body=[*sse(content_chunk("thinking")), 10.0]))
    backend = backend_for(scripted_http, timeout=0.5)
    received = []
    started = time.monotonic()
    with pytest.raises(StreamStalled, match=r"sent nothing for 0\.5 s.*raise --request-timeout"):
        for chunk in backend.stream(CHAT):
            received.append(chunk)
    assert received == ["thinking"]
    assert time.monotonic() - started < 3


def test_connection_dropped_mid_stream(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(headers={"Content-Type": "text/event-stream",
                                       "Content-Length": "100000"},
                              body=sse(content_chunk("partial"))))
    backend = backend_for(scripted_http)
    with pytest.raises(BackendError, match="broke mid-stream"):
        list(backend.stream(CHAT))


def test_cancel_from_another_thread_closes_the_stream(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(body=[*sse(content_chunk("a"), content_chunk("b")), 30.0]))
    backend = backend_for(scripted_http)
    received: list[str] = []
    cancelled_at: list[float] = []

    def cancel_soon() -> None:
        time.sleep(0.2)
        cancelled_at.append(time.monotonic())
        backend.cancel()

    for chunk in backend.stream(CHAT):
        received.append(chunk)
        if len(received) == 1:
            threading.Thread(target=cancel_soon).start()
    ended = time.monotonic()
    assert received == ["a", "b"]
    assert ended - cancelled_at[0] < 1.0
    deadline = time.monotonic() + 3
    while scripted_http.requests[0].disconnected_at is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert scripted_http.requests[0].disconnected_at is not None
    assert backend.last_usage is not None and backend.last_usage.new_tokens >= 1


def test_cancel_during_retry_backoff_returns_at_once(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(status=503, body=["{}"]))
    backend = backend_for(scripted_http, backoff=30.0)
    threading.Timer(0.3, backend.cancel).start()
    started = time.monotonic()
    assert list(backend.stream(CHAT)) == []
    assert time.monotonic() - started < 3


def test_base_url_gets_v1_and_bad_scheme_is_refused() -> None:
    assert OpenAIBackend("http://localhost:8000/", "m").base_url == "http://localhost:8000/v1"
    assert OpenAIBackend("http://h:1/v1", "m").base_url == "http://h:1/v1"
    with pytest.raises(BackendError, match="must start with http"):
        OpenAIBackend("localhost:8000", "m")


def test_count_tokens_estimates_without_a_tokenizer() -> None:
    backend = OpenAIBackend("http://127.0.0.1:9/v1", "m")
    short = backend.count_tokens(Prompt(messages=[{"role": "user", "content": "hi"}]))
    long = backend.count_tokens(Prompt(messages=[{"role": "user", "content": "word " * 700}]))
    assert 0 < short < 20
    assert 900 < long < 1200
    with_tools = Prompt(messages=[{"role": "user", "content": "hi"}], tools=[BASH_TOOL])
    assert backend.count_tokens(with_tools) > short + len(json.dumps(BASH_TOOL)) // 5
