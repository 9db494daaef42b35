"""The openai backend against each server family's wire shapes (tests.fixtures.server_families),
over real sockets: tool calls as each family splits them, reasoning fields, cached tokens,
context-length refusals with their counts, adapter naming from `/v1/models`, a turn that ends at
`finish_reason` on a socket left open, cancel before the first byte, the shared busy backoff."""

from __future__ import annotations

import json
import threading
import time

import pytest

from agent_core import formats
from agent_core.actions import Bash, Submit
from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.base import BackendError, Prompt
from agent_core.backends.faults import ContextTooLong, ServerUnavailable, StreamDropped
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.prompts import TOOLS
from tests.fixtures.server_families import FAMILIES, SGLANG, VLLM, Family
from tests.fixtures.servers import Reply, ScriptedHTTPServer, content_chunk, sse, usage_chunk

CHAT = Prompt(messages=[{"role": "user", "content": "fix the failing test"}], tools=TOOLS)
IDS = [family.name for family in FAMILIES]


def backend_for(server: ScriptedHTTPServer, model: str = "navigator-8b", **kwargs) -> OpenAIBackend:
    kwargs.setdefault("backoff", 0.01)
    return OpenAIBackend(server.base_url, model, **kwargs)


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_each_family_streams_a_tool_call_reasoning_and_cached_tokens(
    family: Family, scripted_http: ScriptedHTTPServer
) -> None:
    family.serve(scripted_http)
    scripted_http.queue(family.reply("The test fails in ops.py.", "bash",
                                     {"command": "grep -n 'len(values)' calc/ops.py"}))
    backend = backend_for(scripted_http)
    text = "".join(backend.stream(CHAT))
    step = formats.parse(text, "toolcall")
    assert step.action == Bash(command="grep -n 'len(values)' calc/ops.py")
    assert "The test fails in ops.py." in step.thought
    usage = backend.last_usage
    assert usage is not None and (usage.prompt_tokens, usage.new_tokens) == (900, 40)
    assert usage.cached_tokens == (0 if family.name in ("ollama", "transformers") else 512)
    assert [g.path for g in scripted_http.gets] == ["/v1/models"]


@pytest.mark.parametrize("family", FAMILIES, ids=IDS)
def test_each_family_is_sent_the_adapter_by_the_name_it_selects_it_with(
    family: Family, scripted_http: ScriptedHTTPServer
) -> None:
    family.serve(scripted_http)
    scripted_http.queue(family.reply("ok", "submit", {}))
    backend = backend_for(scripted_http)
    notices = backend.notices
    list(backend.stream(CHAT))
    list(backend.stream(CHAT))
    sent = [r.body["model"] for r in scripted_http.requests]
    expected = family.adapter_request_name("navigator-8b")
    if expected is not None:
        assert sent == [expected, expected]
    assert len(scripted_http.gets) == 1, "/v1/models is read once"
    assert len(notices) == 1 and repr(sent[0]) in notices[0]


def test_sglang_gets_base_colon_adapter_and_every_accepted_tool(
    scripted_http: ScriptedHTTPServer,
) -> None:
    SGLANG.serve(scripted_http)
    scripted_http.queue(SGLANG.reply("done", "finish", {}))
    backend = backend_for(scripted_http)
    assert "adapter 'navigator-8b' on Qwen/Qwen3-8B" in backend.notices[0]
    text = "".join(backend.stream(CHAT))
    body = scripted_http.requests[0].body
    assert body["model"] == "Qwen/Qwen3-8B:navigator-8b"
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["bash", "str_replace_editor", "submit", "finish"]
    assert body["tools"][:3] == TOOLS, "the prompt's own tools go first, unchanged"
    assert formats.parse(text, "toolcall").action == Submit()


def test_sglang_without_the_adapter_refuses_instead_of_running_the_base(
    scripted_http: ScriptedHTTPServer,
) -> None:
    SGLANG.serve(scripted_http)
    backend = backend_for(scripted_http, model="my-adapter")
    assert backend.notices == []
    with pytest.raises(BackendError, match=r"SGLang serves no model or adapter named "
                                           r"'my-adapter'.*--lora-paths NAME=ADAPTER_DIR` "
                                           r"where NAME is my-adapter"):
        list(backend.stream(CHAT))
    assert scripted_http.requests == []


def test_a_preset_finds_its_adapter_by_path_under_another_name(
    scripted_http: ScriptedHTTPServer,
) -> None:
    VLLM.serve(scripted_http, adapter="nav")
    scripted_http.queue(VLLM.reply("ok", "submit", {}))
    backend = backend_for(scripted_http)
    list(backend.stream(CHAT))
    assert scripted_http.requests[0].body["model"] == "nav"


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.context_error], ids=lambda f: f.name)
def test_each_familys_context_refusal_is_read_with_its_counts(
    family: Family, scripted_http: ScriptedHTTPServer
) -> None:
    assert family.context_error is not None
    scripted_http.queue(family.context_error(16384, 17000))
    with pytest.raises(ContextTooLong) as caught:
        list(backend_for(scripted_http).stream(CHAT))
    if family.name == "ollama":  # Ollama gives no counts
        assert (caught.value.limit, caught.value.prompt_tokens) == (None, None)
    else:
        assert (caught.value.limit, caught.value.prompt_tokens) == (16384, 17000)
    assert "context window" in str(caught.value)
    assert len(scripted_http.requests) == 1


def test_older_vllm_and_sglang_wordings_are_read_too() -> None:
    from agent_core.backends.faults import context_too_long

    old = context_too_long("'max_tokens' or 'max_completion_tokens' is too large: 8000. This "
                           "model's maximum context length is 4096 tokens and your request has "
                           "2778 input tokens (8000 > 4096 - 2778).")
    assert old is not None and (old.limit, old.prompt_tokens) == (4096, 2778)
    total = context_too_long("Requested token count exceeds the model's maximum context length "
                             "of 16384 tokens. You requested a total of 17500 tokens: 17000 "
                             "tokens from the input messages and 500 tokens for the completion.")
    assert total is not None and (total.limit, total.prompt_tokens) == (16384, 17000)
    assert context_too_long("CUDA out of memory") is None
    body = {"object": "error", "message": "The input (17000 tokens) is longer than the model's "
            "context length (16384 tokens).", "type": "BadRequestError", "param": None, "code": 400}
    sglang = context_too_long(body["message"], body)  # SGLang's non-streamed ErrorResponse
    assert sglang is not None and (sglang.limit, sglang.prompt_tokens) == (16384, 17000)


def test_a_turn_ends_at_finish_reason_when_the_socket_stays_open(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.queue(Reply(body=[*sse(content_chunk("Thought: done\n"),
                                         content_chunk("Action: finish", finish="stop"),
                                         usage_chunk(50, 6)), 60.0]))
    backend = backend_for(scripted_http, timeout=30)
    started = time.monotonic()
    assert "".join(backend.stream(CHAT)) == "Thought: done\nAction: finish"
    assert time.monotonic() - started < 10, "must not wait for --request-timeout"
    assert backend.last_usage is not None and backend.last_usage.prompt_tokens == 50


def test_finish_reason_without_usage_waits_only_the_bounded_usage_wait(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.queue(Reply(body=[*sse(content_chunk("ok", finish="stop")), 60.0]))
    backend = backend_for(scripted_http, timeout=30)
    started = time.monotonic()
    assert "".join(backend.stream(CHAT)) == "ok"
    assert time.monotonic() - started < 10


def test_cancel_before_the_first_byte_closes_the_connection(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.queue(Reply(delay=30.0, body=sse(content_chunk("late"))))
    backend = backend_for(scripted_http, timeout=60)
    result: list[list[str]] = []
    worker = threading.Thread(target=lambda: result.append(list(backend.stream(CHAT))))
    worker.start()
    while not scripted_http.requests:
        time.sleep(0.01)
    time.sleep(0.2)
    backend.cancel()
    worker.join(timeout=5)
    assert not worker.is_alive(), "cancel must end the wait for the first byte"
    assert result == [[]]
    deadline = time.monotonic() + 5
    while scripted_http.requests[0].disconnected_at is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert scripted_http.requests[0].disconnected_at is not None, "the server must see it leave"


def test_after_a_cancel_the_next_turn_reconnects(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(delay=30.0, body=sse(content_chunk("late"))),
                        Reply(body=sse(content_chunk("next", finish="stop"), "[DONE]")))
    backend = backend_for(scripted_http, timeout=60)
    threading.Timer(0.3, backend.cancel).start()
    assert list(backend.stream(CHAT)) == []
    assert "".join(backend.stream(CHAT)) == "next"


def test_a_stream_dropped_mid_reply_is_a_retryable_fault(scripted_http: ScriptedHTTPServer) -> None:
    scripted_http.queue(Reply(headers={"Content-Type": "text/event-stream",
                                       "Content-Length": "100000"},
                              body=sse(content_chunk("partial"))))
    with pytest.raises(StreamDropped, match="broke mid-stream"):
        list(backend_for(scripted_http).stream(CHAT))


def test_busy_retries_honour_retry_after_until_the_total_deadline(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.queue(Reply(status=429, headers={"Retry-After": "0.3"},
                              body=['{"error": {"message": "queue full"}}']))
    backend = backend_for(scripted_http, busy_deadline=2.0)
    started = time.monotonic()
    with pytest.raises(ServerUnavailable) as caught:
        list(backend.stream(CHAT))
    waited = time.monotonic() - started
    assert caught.value.why == "server busy (HTTP 429)"
    assert caught.value.reason == "server_unavailable"  # (the session ends with it, resumable)
    assert "--resume" in str(caught.value) and "queue full" in str(caught.value)
    requests = len(scripted_http.requests)
    assert 2 <= requests <= 8, "Retry-After: 0.3 within a 2 s deadline"
    # every pause was 0.3 s, but the one that would pass the deadline is cut at it
    assert waited >= min(0.3 * (requests - 1), 2.0)


def test_one_busy_answer_slows_every_backend_sharing_the_backoff(
    scripted_http: ScriptedHTTPServer,
) -> None:
    shared = ServerBackoff(first=0.01)
    scripted_http.queue(
        Reply(status=503, headers={"Retry-After": "0.8"}, body=['{"error": "busy"}']),
        Reply(body=sse(content_chunk("ok", finish="stop"), "[DONE]")),
    )
    first = backend_for(scripted_http, shared_backoff=shared)
    second = backend_for(scripted_http, shared_backoff=shared)
    worker = threading.Thread(target=lambda: list(first.stream(CHAT)))
    worker.start()
    while shared.busy_answers == 0:
        time.sleep(0.01)
    assert "".join(second.stream(CHAT)) == "ok"
    worker.join(timeout=10)
    refused, *later = scripted_http.requests
    assert len(later) == 2
    assert all(r.received_at - refused.received_at >= 0.75 for r in later), (
        "the backend that never saw the 503 waited out the pause too")


def test_the_models_listing_failing_leaves_the_name_as_given(
    scripted_http: ScriptedHTTPServer,
) -> None:
    scripted_http.queue(Reply(body=sse(content_chunk("ok", finish="stop"), "[DONE]")))
    backend = backend_for(scripted_http, model="my-model")
    assert backend.notices == []
    list(backend.stream(CHAT))
    assert json.loads(json.dumps(scripted_http.requests[0].body))["model"] == "my-model"


def test_a_server_that_restarts_mid_session_is_waited_for_not_a_setup_error() -> None:
    server = ScriptedHTTPServer()
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    server.queue(Reply(body=sse(content_chunk("one", finish="stop"), "[DONE]")))
    backend = backend_for(server, busy_deadline=30.0)
    assert "".join(backend.stream(CHAT)) == "one"
    server.stop()
    restarted: list[ScriptedHTTPServer] = []

    def restart() -> None:
        again = ScriptedHTTPServer(port=port)
        again.queue(Reply(body=sse(content_chunk("two", finish="stop"), "[DONE]")))
        restarted.append(again)

    threading.Timer(1.0, restart).start()
    try:
        assert "".join(backend.stream(CHAT)) == "two"
    finally:
        for again in restarted:
            again.stop()
    assert backend.busy.busy_answers >= 1


def test_a_server_that_never_comes_back_is_server_unavailable() -> None:
    server = ScriptedHTTPServer()
    server.queue(Reply(body=sse(content_chunk("one", finish="stop"), "[DONE]")))
    backend = backend_for(server, busy_deadline=0.5)
    "".join(backend.stream(CHAT))
    server.stop()
    with pytest.raises(ServerUnavailable) as caught:
        list(backend.stream(CHAT))
    assert caught.value.why == "server unreachable" and "--resume" in str(caught.value)


def test_a_real_transformers_serve_is_named_as_it_lists_its_pinned_model(transformers_server):
    from tests.tiny_model import SCRIPTED_MESSAGES, SCRIPTED_REPLY

    backend = OpenAIBackend(transformers_server.base_url, "navigator-8b", thinking=False)
    try:
        [notice] = backend.notices
        assert notice.startswith("talking to transformers serve at its model ")
        assert transformers_server.model in notice
        prompt = Prompt(messages=list(SCRIPTED_MESSAGES), stop_after=["</tool_call>"],
                        max_new_tokens=64)
        assert "".join(backend.stream(prompt)) == SCRIPTED_REPLY
    finally:
        backend.close()


def test_cancel_while_the_connection_hangs_returns_at_once() -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # never accepted: once one connection waits, new ones hang in connect
    port = listener.getsockname()[1]
    filler = socket.create_connection(("127.0.0.1", port))
    backend = OpenAIBackend(f"http://127.0.0.1:{port}/v1", "m", timeout=60)
    result: list[list[str]] = []
    worker = threading.Thread(target=lambda: result.append(list(backend.stream(CHAT))))
    try:
        worker.start()
        time.sleep(0.3)
        backend.cancel()
        worker.join(timeout=5)
        assert not worker.is_alive(), "cancel must not wait for the 10 s connect timeout"
        assert result == [[]]
    finally:
        filler.close()
        listener.close()
        worker.join(timeout=15)
