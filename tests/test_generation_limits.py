"""Generation limits: `--max-new-tokens` caps a runaway reply; a looping reply stops early."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.backends.factory import BackendConfig, resolve
from agent_core.backends.presets import PRESETS
from agent_core.events import FormatError, Notice, TokenStreamed
from agent_core.policy import AutoPolicy
from agent_core.repetition import RepetitionGuard
from tests.fixtures.servers import Reply, content_chunk, sse
from tests.test_cli import ISSUE, navtui
from tests.test_session import prompt_text, sessions, write_script  # noqa: F401 (fixture)

RUNAWAY = "Thought: I will test it. " + "".join(f"add({n}, {n + 1}) " for n in range(2, 2000, 2))


def feed_all(text: str, size: int = 5) -> tuple[int, str | None]:
    """(characters fed, pattern) when the guard fires, else (len(text), None)."""
    guard = RepetitionGuard()
    for start in range(0, len(text), size):
        pattern = guard.feed(text[start:start + size])
        if pattern is not None:
            return start + size, pattern
    return len(text), None


def test_a_numbered_loop_is_caught_long_before_the_cap():
    fed, pattern = feed_all(RUNAWAY)
    assert pattern is not None and "add(" in pattern
    assert fed < 1200 < len(RUNAWAY)


def test_an_exact_loop_is_caught():
    fed, pattern = feed_all("Let me think. " + "ok " * 500)
    assert pattern is not None and "ok" in pattern and fed < 500


def test_real_code_and_similar_lines_are_not_loops():
    source = (Path(__file__).parent.parent / "agent_core" / "session.py").read_text()
    assert feed_all(source) == (len(source), None)
    asserts = "".join(f"    assert add({n}, 1) == {n + 1}\n" for n in range(30))
    assert feed_all(asserts)[1] is None


def test_a_looping_reply_is_stopped_and_both_user_and_model_are_told(git_repo, tmp_path, sessions):  # noqa: F811
    script = write_script(tmp_path / "s.jsonl", [RUNAWAY, "Thought: stop\nAction: submit"])
    session, recorder, events = sessions(git_repo, script, "text")
    finished = session.run(AutoPolicy())
    assert finished.reason == "submitted"
    streamed = "".join(e.text for e in events if isinstance(e, TokenStreamed) and e.index == 1)
    assert len(streamed) < len(RUNAWAY) // 5
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("stopped early: it kept repeating" in m and "add(" in m for m in notices)
    error = next(e for e in events if isinstance(e, FormatError))
    assert "stopped because it kept repeating" in error.observation
    assert "stopped because it kept repeating" in prompt_text(recorder.prompts[1])


def test_presets_give_the_default_and_the_flag_wins():
    preset = next(iter(PRESETS.values()))
    resolved = resolve(BackendConfig(backend="hf", model=preset.name))
    assert resolved.max_new_tokens == preset.max_new_tokens
    assert resolve(BackendConfig(backend="hf", model=preset.name, max_new_tokens=64)).max_new_tokens == 64
    assert resolve(BackendConfig(backend="hf", model="some/model")).max_new_tokens == 1024


def events_of(result) -> list[dict]:
    assert result.stdout, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_max_new_tokens_caps_a_runaway_on_the_tiny_real_model(git_repo, tiny_model_dir):
    result = navtui(
        "--auto", "--json", "--backend", "hf", "--model", str(tiny_model_dir), "--dialect",
        "toolcall", "--max-new-tokens", "64", "--issue", ISSUE, str(git_repo),
    )
    events = events_of(result)
    assert result.returncode == 2, result.stderr
    started = next(e for e in events if e["type"] == "SessionStarted")
    assert started["config"]["max_new_tokens"] == 64
    usages = [e["usage"]["new_tokens"] for e in events if e["type"] == "UsageReported"]
    assert usages and usages == [64] * len(usages)  # the random model never ends by itself
    assert any(e["type"] == "Notice" and "cut at 64 tokens" in e["message"] for e in events)
    errors = [e for e in events if e["type"] == "FormatError"]
    assert "cut off after 64 tokens" in errors[0]["observation"]


def test_max_new_tokens_reaches_the_openai_server(git_repo, scripted_http):
    scripted_http.queue(Reply(body=sse(content_chunk(RUNAWAY[:200], finish="length"), "[DONE]")))
    result = navtui(
        "--auto", "--json", "--base-url", scripted_http.base_url, "--model", "m", "--dialect",
        "toolcall", "--max-new-tokens", "64", "--max-steps", "1", "--issue", ISSUE, str(git_repo),
    )
    events_of(result)
    assert scripted_http.requests and all(
        r.body["max_tokens"] == 64 for r in scripted_http.requests
    )


def test_a_server_that_ignores_max_tokens_is_cut_off_by_the_client(git_repo, scripted_http):
    endless = [content_chunk(f"step {n} ") for n in range(5000)]
    scripted_http.queue(Reply(body=[*sse(*endless), 30.0, *sse("[DONE]")]))
    result = navtui(
        "--auto", "--json", "--base-url", scripted_http.base_url, "--model", "m", "--dialect",
        "toolcall", "--max-new-tokens", "64", "--max-steps", "1", "--issue", ISSUE, str(git_repo),
    )
    events = events_of(result)
    streamed = "".join(e["text"] for e in events if e["type"] == "TokenStreamed")
    replies = len(scripted_http.requests)  # the cut reply is a format error: the model retries
    assert replies >= 1 and 64 * replies <= streamed.count("step ") <= (64 + 16) * replies
    usages = [e["usage"]["new_tokens"] for e in events if e["type"] == "UsageReported"]
    assert usages and all(n >= 64 for n in usages)
    assert any(e["type"] == "Notice" and "cut at 64 tokens" in e["message"] for e in events)
    assert all(r.disconnected_at is not None for r in scripted_http.requests)


def test_the_reply_budget_also_catches_a_server_packing_many_tokens_per_delta():
    from agent_core.backends.reply_budget import ReplyBudget

    honest = ReplyBudget(64)
    assert not any(honest.feed(" " * 12) for _ in range(64))  # a long whitespace token each
    packed = ReplyBudget(64)
    fed = 0
    while not packed.feed("add(1, 2) " * 20):
        fed += 1
    assert 0 < fed * 200 < 64 * 16
