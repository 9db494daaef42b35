"""End to end over HTTP: `navtui --auto` against a real local server that streams OpenAI chat
completions (structured tool-call deltas, as vLLM's hermes parser sends them, and plain text)."""

from __future__ import annotations

import json
import subprocess

from tests.fixtures.servers import Reply, content_chunk, sse
from tests.test_cli import ISSUE, navtui
from tests.test_session import BUGGY_LINE, FIXED_LINE, repo_tests_pass


def tool_call_reply(name: str, arguments: dict) -> Reply:
    """A streamed turn whose action arrives as `tool_calls` deltas, arguments in two pieces."""
    text = json.dumps(arguments)
    half = len(text) // 2
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": text[:half]}}
    second = {"index": 0, "function": {"arguments": text[half:]}}
    return Reply(body=sse(
        content_chunk("Looking at it."),
        {"choices": [{"index": 0, "delta": {"tool_calls": [first]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [second]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    ))


def test_auto_fixes_the_bug_through_an_openai_compatible_server(git_repo, scripted_http):
    scripted_http.queue(
        tool_call_reply("bash", {"command": "grep -n 'len(values)' /testbed/calc/ops.py"}),
        tool_call_reply("str_replace_editor", {
            "command": "str_replace", "path": "/testbed/calc/ops.py", "old_str": BUGGY_LINE, "new_str": FIXED_LINE,
        }),
        Reply(body=sse(
            content_chunk('<tool_call>\n{"name": "submit", '),
            content_chunk('"arguments": {}}\n</tool_call>', finish="stop"),
            "[DONE]",
        )),
    )
    result = navtui(
        "--auto", "--json", "--base-url", scripted_http.base_url, "--model", "navigator",
        "--dialect", "toolcall", "--api-key", "sk-test-secret", "--issue", ISSUE, str(git_repo),
    )

    assert result.returncode == 0, result.stderr
    assert "sk-test-secret" not in result.stdout
    finished = json.loads(result.stdout.splitlines()[-1])
    assert finished["reason"] == "submitted" and f"+{FIXED_LINE}" in finished["patch"]
    assert repo_tests_pass(git_repo)
    logs = list((git_repo / ".git/navtui/sessions").glob("*.jsonl"))
    assert logs and "sk-test-secret" not in logs[0].read_text()

    requests = scripted_http.requests
    assert len(requests) == 4  # the first submit is answered with SWE-smith's review message
    review = requests[3].body["messages"][-1]
    assert review["role"] == "tool" and review["content"].startswith(
        "OBSERVATION:\nThank you for your work on this issue."
    )
    assert f"+{FIXED_LINE}" in review["content"] and "\r\n</diff>" in review["content"]
    assert requests[0].body["messages"][0]["content"] == (
        "You are a helpful assistant that can interact with a computer to solve tasks."
    )
    assert requests[0].body["messages"][1]["content"].startswith("<uploaded_files>\n/testbed\n")
    assert all(str(git_repo) not in json.dumps(r.body) for r in requests)
    assert requests[1].body["messages"][-1]["content"].startswith("OBSERVATION:\n")
    assert all(r.headers.get("Authorization") == "Bearer sk-test-secret" for r in requests)
    first, second = requests[0].body, requests[1].body
    assert first["model"] == "navigator" and first["stream"] is True
    assert {t["function"]["name"] for t in first["tools"]} == {"bash", "str_replace_editor", "submit"}
    assert ISSUE in first["messages"][1]["content"]
    assert "7:" in json.dumps(second["messages"][-1]) and BUGGY_LINE.strip() in json.dumps(second["messages"])


def test_a_server_error_is_retried_then_stops_resumable_with_exit_2(git_repo, scripted_http):
    """A 5xx is the server's fault, not the user's: retried, then a resumable stop (it was
    exit 1, as for a setup problem)."""
    scripted_http.queue(Reply(status=500, headers={"Content-Type": "application/json"},
                              body=['{"error": {"message": "model exploded"}}']))
    result = navtui("--auto", "--base-url", scripted_http.base_url, "--model", "m", "--dialect", "toolcall",
                    "--issue", ISSUE, str(git_repo))
    assert result.returncode == 2
    assert "model exploded" in result.stdout + result.stderr
    assert "--resume" in result.stdout + result.stderr
    assert len(scripted_http.requests) == 3
    assert subprocess.run(["git", "status", "--porcelain"], cwd=git_repo, capture_output=True, text=True).stdout == ""
