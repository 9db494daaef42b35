"""True token counts from the server: usage is asked for, read after the closing tag (for a
bounded time), and counts the backend had to estimate say so."""

from __future__ import annotations

import json
import time

from agent_core.backends.base import Prompt
from agent_core.backends.openai_compat import OpenAIBackend
from tests.fixtures.servers import Reply, ServedModel, content_chunk, sse, usage_chunk
from tests.test_cli import ISSUE, navtui
from tests.tiny_model import SCRIPTED_MESSAGES, SCRIPTED_REPLY

CALL = '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>'
PROMPT = Prompt(messages=[{"role": "user", "content": "fix it"}], stop_after=["</tool_call>"])


def test_usage_sent_after_the_tool_call_is_read(scripted_http):
    scripted_http.queue(Reply(body=[
        *sse(content_chunk(CALL)), 0.3,  # the server is still finishing the turn
        *sse(content_chunk("", finish="stop"), usage_chunk(1001, 36), "[DONE]"),
    ]))
    backend = OpenAIBackend(scripted_http.base_url, "m")
    try:
        assert "".join(backend.stream(PROMPT)) == CALL
    finally:
        backend.close()
    body = scripted_http.requests[0].body
    assert body["stream_options"] == {"include_usage": True}
    usage = backend.last_usage
    assert (usage.prompt_tokens, usage.new_tokens, usage.estimated) == (1001, 36, False)


def test_without_usage_the_wait_is_bounded_and_counts_are_marked_estimates(scripted_http):
    scripted_http.queue(Reply(body=[*sse(content_chunk(CALL)), 30.0, *sse("[DONE]")]))
    backend = OpenAIBackend(scripted_http.base_url, "m")
    try:
        assert "".join(backend.stream(PROMPT)) == CALL
    finally:
        backend.close()
    # It left instead of waiting out the server's 30 s pause (the server notices within ~1 s).
    deadline = time.monotonic() + 15
    while scripted_http.requests[0].disconnected_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert scripted_http.requests[0].disconnected_at is not None
    assert backend.last_usage.estimated is True
    assert backend.last_usage.new_tokens > 0


def test_events_and_log_carry_the_servers_counts(git_repo, scripted_http):
    scripted_http.queue(Reply(body=sse(
        content_chunk(CALL), content_chunk("", finish="stop"), usage_chunk(1001, 36), "[DONE]",
    )))
    result = navtui(
        "--auto", "--json", "--base-url", scripted_http.base_url, "--model", "m", "--dialect",
        "toolcall", "--issue", ISSUE, str(git_repo),
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    usage = next(e for e in events if e["type"] == "UsageReported")
    assert usage["usage"]["prompt_tokens"] == 1001 and usage["usage"]["new_tokens"] == 36
    assert usage["usage"]["estimated"] is False
    assert usage["context_estimated"] is True  # no --tokenizer: the prompt was fitted by estimate
    log = next((git_repo / ".git/navtui/sessions").glob("*.jsonl")).read_text()
    assert '"estimated": false' in log and '"context_estimated": true' in log


def test_a_real_transformers_serve_reports_usage(transformers_server: ServedModel):
    backend = OpenAIBackend(transformers_server.base_url, transformers_server.model, thinking=False)
    prompt = Prompt(messages=list(SCRIPTED_MESSAGES), stop_after=["</tool_call>"], max_new_tokens=64)
    try:
        assert "".join(backend.stream(prompt)) == SCRIPTED_REPLY
    finally:
        backend.close()
    assert backend.last_usage.estimated is False


async def test_the_status_bar_marks_estimates():
    from tests.test_widgets import Harness
    from widgets.status_bar import StatusBar

    status = StatusBar()
    async with Harness(status).run_test(size=(120, 5)) as pilot:
        status.tokens_per_second, status.context_used, status.context_limit = 12, 1141, 16_384
        await pilot.pause()
        assert "12 tok/s │ ctx 1.1k/16.4k" in status.render().plain
        status.estimated = True
        await pilot.pause()
        assert "~12 tok/s │ ctx ~1.1k/16.4k" in status.render().plain
