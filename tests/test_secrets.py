"""Secrets stay out of logs, transcripts, URLs shown and argv: keys from the flag, the environment
or a URL's credentials; URL credentials go to the server as the Bearer key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.backends.credentials import split_credentials
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.backends.base import Prompt
from agent_core.trajectory import REDACTED
from tests.fixtures.servers import Reply, content_chunk, sse
from tests.test_cli import navtui
from tests.test_session import write_script

ENV_KEY = "sk-env-navtui-0451"
OPENAI_KEY = "sk-env-openai-7731"
FLAG_KEY = "sk-flag-5517"
URL_PASSWORD = "pw-url-9902"

SUBMIT = Reply(body=sse(
    content_chunk('<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>', finish="stop"),
    "[DONE]",
))


def bash_reply(command: str) -> Reply:
    call = json.dumps({"name": "bash", "arguments": {"command": command}})
    return Reply(body=sse(content_chunk(f"<tool_call>\n{call}\n</tool_call>", finish="stop"), "[DONE]"))


def session_log(repo: Path) -> str:
    (log,) = (repo / ".git/navtui/sessions").glob("*.jsonl")
    return log.read_text(encoding="utf-8")


def test_keys_from_the_environment_never_reach_the_log_or_the_transcript(git_repo, tmp_path):
    # The model prints the keys however it can: from its environment and from a file.
    (git_repo / "notes.txt").write_text(f"navtui {ENV_KEY}\nopenai {OPENAI_KEY}\n")
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: look\nAction: bash echo \"$NAVTUI_API_KEY $OPENAI_API_KEY\"; cat notes.txt",
        f"Thought: I saw {ENV_KEY}\nAction: submit",
    ])
    env = {"NAVTUI_API_KEY": ENV_KEY, "OPENAI_API_KEY": OPENAI_KEY}
    for flags in (("--auto",), ("--auto", "--json")):
        result = navtui(*flags, "--script", str(script), "--issue", "x", str(git_repo), env=env)
        assert result.returncode == 0, result.stderr
        shown = result.stdout + result.stderr
        assert ENV_KEY not in shown and OPENAI_KEY not in shown
        assert f"navtui {REDACTED}" in shown and f"I saw {REDACTED}" in shown
    for log in (git_repo / ".git/navtui/sessions").glob("*.jsonl"):
        text = log.read_text(encoding="utf-8")
        assert ENV_KEY not in text and OPENAI_KEY not in text
        assert f"openai {REDACTED}" in text


def test_the_api_key_flag_is_redacted_and_warned_about(git_repo, tmp_path):
    (git_repo / "notes.txt").write_text(f"key {FLAG_KEY}\n")
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: look\nAction: bash cat notes.txt",
        "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--api-key", FLAG_KEY, "--script", str(script), "--issue", "x",
                    str(git_repo))
    assert result.returncode == 0, result.stderr
    assert "--api-key on the command line can be read by every process" in result.stderr
    assert "NAVTUI_API_KEY" in result.stderr
    assert FLAG_KEY not in result.stdout and FLAG_KEY not in session_log(git_repo)


def test_url_credentials_are_sent_as_the_bearer_key_and_shown_nowhere(git_repo, scripted_http):
    scripted_http.queue(bash_reply(f"echo {URL_PASSWORD}"), SUBMIT)
    url = scripted_http.base_url.replace("http://", f"http://alice:{URL_PASSWORD}@")
    env = {"NAVTUI_API_KEY": "", "OPENAI_API_KEY": ""}
    result = navtui("--auto", "--base-url", url, "--model", "m", "--dialect", "toolcall",
                    "--issue", "x", str(git_repo), env=env)
    assert result.returncode == 0, result.stderr
    assert all(r.headers.get("Authorization") == f"Bearer {URL_PASSWORD}"
               for r in scripted_http.requests)
    assert len(scripted_http.requests) >= 2
    assert "a key in --base-url on the command line can be read" in result.stderr
    shown = result.stdout + result.stderr
    assert URL_PASSWORD not in shown and "alice" not in shown
    assert f"base_url {scripted_http.base_url}" in shown  # the backend line, credentials dropped
    log = session_log(git_repo)
    assert URL_PASSWORD not in log and "alice" not in log
    assert f'"output": "{REDACTED}\\n"' in log  # the command's output


def test_url_credentials_stay_out_of_error_messages(git_repo, scripted_http):
    scripted_http.queue(Reply(status=401, headers={"Content-Type": "application/json"},
                              body=['{"error": {"message": "bad key"}}']))
    url = scripted_http.base_url.replace("http://", f"http://alice:{URL_PASSWORD}@")
    result = navtui("--auto", "--base-url", url, "--model", "m", "--dialect", "toolcall",
                    "--issue", "x", str(git_repo))
    assert result.returncode == 1
    shown = result.stdout + result.stderr
    assert "bad key" in shown and scripted_http.base_url in shown
    assert URL_PASSWORD not in shown and "alice" not in shown
    assert URL_PASSWORD not in session_log(git_repo)


def test_an_explicit_key_wins_over_the_urls(scripted_http):
    scripted_http.queue(SUBMIT)
    url = scripted_http.base_url.replace("http://", f"http://{URL_PASSWORD}@")
    assert split_credentials(url) == (scripted_http.base_url, URL_PASSWORD)
    backend = OpenAIBackend(url, "m", api_key=FLAG_KEY)
    try:
        assert URL_PASSWORD not in repr(backend)
        "".join(backend.stream(Prompt(messages=[{"role": "user", "content": "hi"}])))
    finally:
        backend.close()
    assert scripted_http.requests[0].headers["Authorization"] == f"Bearer {FLAG_KEY}"


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_navtui_passes_no_key_in_the_argv_of_what_it_spawns(git_repo, tmp_path, sandbox):
    """Every process the model's shell can see (navtui, its shell, git, the sandbox's bwrap and
    the model's commands): none has the key in its argv when the key comes from the environment."""
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: look\nAction: bash cat /proc/[0-9]*/cmdline | tr '\\0' ' ' > argv.txt",
        "Thought: done\nAction: submit",
    ])
    result = navtui("--auto", "--sandbox", sandbox, "--script", str(script), "--issue", "x",
                    str(git_repo), env={"NAVTUI_API_KEY": ENV_KEY})
    assert result.returncode == 0, result.stderr
    argv = (git_repo / "argv.txt").read_text()
    assert "cat /proc/" in argv  # the listing saw the command itself
    if sandbox == "off":
        assert "app.cli" in argv  # ... and, without the sandbox, navtui
    assert ENV_KEY not in argv
