"""What reaches an OpenAI-compatible server is the models' training language.

`navtui --auto --model navigator-8b` against a real local HTTP server (tests/fixtures/servers.py)
that records each request body: SWE-smith's system prompt, its instance template naming
/testbed, SWE-agent's tool schemas, `OBSERVATION:` observations that never show the real root,
and a review turn after the first submit. `--model r2e-30b` sends `/v1/completions` starting with
the r2e-card prompt byte for byte, with 512 new tokens and the card's stop strings.
"""

from __future__ import annotations

import json

from agent_core import prompts
from agent_core.formats import text as text_dialect
from tests.fixtures.servers import Reply, content_chunk, sse
from tests.test_cli import ISSUE, navtui


def turn(text: str) -> Reply:
    return Reply(body=sse(content_chunk(text, finish="stop"), "[DONE]"))


def call(name: str, arguments: dict) -> Reply:
    return turn(f"Next.\n<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>")


def test_navigator_8b_request_speaks_swe_smith(git_repo, scripted_http):
    scripted_http.queue(
        call("bash", {"command": "cd /testbed && pwd && ls -1 /testbed/calc"}),
        call("str_replace_editor", {"command": "create", "path": "/testbed/reproduce.py",
                                    "file_text": "print(1)\n"}),
        call("bash", {"command": "true"}),
        call("submit", {}),
        call("bash", {"command": "rm /testbed/reproduce.py"}),
        call("submit", {}),
    )
    result = navtui("--auto", "--json", "--base-url", scripted_http.base_url,
                    "--model", "navigator-8b", "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    finished = json.loads(result.stdout.splitlines()[-1])
    assert finished["reason"] == "submitted" and "reproduce.py" not in finished["patch"]

    bodies = [r.body for r in scripted_http.requests]
    assert len(bodies) == 6
    assert all(str(git_repo) not in json.dumps(body) for body in bodies)
    first = bodies[0]
    assert first["tools"] == prompts.TOOLS
    assert [t["function"]["name"] for t in first["tools"]] == ["bash", "str_replace_editor", "submit"]
    system, user = first["messages"]
    assert system == {"role": "system",
                      "content": "You are a helpful assistant that can interact with a computer to solve tasks."}
    assert user["content"].startswith(
        "<uploaded_files>\n/testbed\n</uploaded_files>\nI've uploaded a python code repository in the "
        "directory /testbed. Consider the following PR description:\n\n<pr_description>\n"
        f"{ISSUE}\n</pr_description>\n\n"
    )
    last = bodies[-1]["messages"]
    tools = [m["content"] for m in last if m["role"] == "tool"]
    assert tools[0] == "OBSERVATION:\n/testbed\r\n__init__.py\r\nops.py"
    assert tools[1] == "OBSERVATION:\nFile created successfully at: /testbed/reproduce.py"
    assert tools[2] == "Your command ran successfully and did not produce any output."
    assert tools[3].startswith("OBSERVATION:\nThank you for your work on this issue.")
    assert "+++ b/reproduce.py\r\n@@ -0,0 +1 @@\r\n+print(1)\r\n" in tools[3] and tools[3].endswith("\r\n</diff>")
    assert "[exit code" not in json.dumps(last)


def test_no_submit_review_ends_at_the_first_submit(git_repo, scripted_http):
    scripted_http.queue(call("submit", {}))
    result = navtui("--auto", "--json", "--no-submit-review", "--base-url", scripted_http.base_url,
                    "--model", "navigator-8b", "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    assert len(scripted_http.requests) == 1


def test_prompt_profile_flag_switches_the_words(git_repo, scripted_http):
    scripted_http.queue(call("submit", {}))
    result = navtui("--auto", "--prompt-profile", "card", "--base-url", scripted_http.base_url,
                    "--model", "navigator-8b", "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    assert scripted_http.requests[0].body["messages"][1]["content"] == ISSUE
    bad = navtui("--auto", "--prompt-profile", "nope", "--base-url", scripted_http.base_url,
                 "--model", "navigator-8b", "--issue", ISSUE, str(git_repo))
    assert bad.returncode == 1 and "unknown prompt profile 'nope'" in bad.stderr


def test_prompt_profile_flag_takes_a_file_that_extends_a_profile(git_repo, scripted_http, tmp_path):
    profile = tmp_path / "mine.yaml"
    profile.write_text("extends: swesmith\ntemplates:\n  system_template: |-\n    Be brief.\n")
    scripted_http.queue(call("submit", {}))
    result = navtui("--auto", "--no-submit-review", "--prompt-profile", str(profile),
                    "--base-url", scripted_http.base_url, "--model", "navigator-8b",
                    "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    messages = scripted_http.requests[0].body["messages"]
    assert messages[0]["content"] == "Be brief." and messages[1]["content"].startswith("<uploaded_files>")


def test_r2e_30b_completion_request_starts_with_the_card_prompt(git_repo, scripted_http):
    scripted_http.queue(turn(" The bug is in ops.\nAction: bash cat /testbed/calc/ops.py\nextra line"),
                        turn(" Done.\nAction: submit"))
    result = navtui("--auto", "--base-url", scripted_http.base_url, "--model", "r2e-30b",
                    "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    first, second = scripted_http.requests
    assert first.path == "/v1/completions"
    assert first.body["prompt"] == (
        "You are an expert software engineer fixing bugs.\n\nAVAILABLE ACTIONS:\n"
        "- bash <command>: Run shell command\n- read <file>: Read file content\n"
        "- search <pattern>: Search for pattern\n- edit <file> <start> <end>: Edit file\n"
        "- submit: Submit solution\n\n"
        f"## Problem:\n{ISSUE}\n\n## Your turn:\nThought:"
    )
    assert first.body["max_tokens"] == 512
    assert first.body["stop"] == text_dialect.STOP_BEFORE[:4]
    later = second.body["prompt"]
    assert later.startswith(first.body["prompt"])  # a prompt is a prefix of the next one
    # Only the action's first line ran: the model's next line is its own text, not a command.
    assert "Action: bash cat /testbed/calc/ops.py\nextra line\n\nObservation:\ndef add(a, b):" in later
    assert str(git_repo) not in later and "extra line: command not found" not in later
