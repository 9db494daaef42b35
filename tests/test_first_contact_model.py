"""A small or generic model's first hour: what it reads after a bad reply (a complete example
built from the profile's tools, never a placeholder to copy; a nudge when its first reply is
prose), the live token figures while it writes, and its own context window."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from agent_core.actions import Bash
from agent_core.backends.base import Prompt
from agent_core.events import FormatError, Notice, TokenStreamed, TurnStarted
from agent_core.policy import AutoPolicy
from app.headless import TurnMeter
from tests.fixtures.running_app import main_screen, running_app
from tests.fixtures.tui import RecordingReplay, make_session as make_app_session
from tests.test_session import prompt_text, sessions, write_script  # noqa: F401 (fixture)
from widgets.status_bar import StatusBar

PROSE = "The bug is in calc/ops.py: average divides by len(values) + 1. Use len(values) instead."
# A long thought with no repeating tail (the repetition guard would stop the reply early).
VARIED = " ".join(hashlib.sha1(str(n).encode()).hexdigest()[:7] for n in range(200))
TOOLCALL_EXAMPLE = ('<tool_call>\n{"name": "str_replace_editor", "arguments": '
                    '{"command": "view", "path": "/testbed"}}\n</tool_call>')


def test_a_prose_first_reply_gets_a_complete_example_and_a_nudge_once(git_repo, tmp_path, sessions):
    from agent_core.prompts import PROSE_NUDGE

    script = write_script(tmp_path / "s.jsonl", [PROSE, PROSE, "<tool_call>\n{\"name\": \"submit\", \"arguments\": {}}\n</tool_call>"])
    session, recorder, events = sessions(git_repo, script, "toolcall")
    session.run(AutoPolicy())
    second, third = prompt_text(recorder.prompts[1]), prompt_text(recorder.prompts[2])
    for read in (second, third):
        assert TOOLCALL_EXAMPLE in read
        assert ("You can use: bash (command); str_replace_editor (command, path, file_text, "
                "old_str, new_str, insert_line, view_range); submit.") in read
        assert "TOOL_NAME" not in read and "PLACEHOLDER" not in read and "CAPITALISED" not in read
    assert second.count(PROSE_NUDGE) == 1 and third.count(PROSE_NUDGE) == 1  # the first reply's only
    [first_error, second_error] = [e for e in events if isinstance(e, FormatError)]
    assert TOOLCALL_EXAMPLE in first_error.message and PROSE_NUDGE in first_error.observation
    assert PROSE_NUDGE not in second_error.observation


def test_a_failed_call_gets_no_prose_nudge(git_repo, tmp_path, sessions):
    """Qwen2.5-Coder-0.5B's first reply: a call to a tool that does not exist, in a ```json
    fence. That is an attempt at an action, told what is wrong with it, not prose."""
    from agent_core.prompts import PROSE_NUDGE

    call = '```json\n{\n  "name": "mean",\n  "arguments": {"command": "python3 -m unittest -q"}\n}\n```'
    script = write_script(tmp_path / "s.jsonl", [call])
    session, recorder, events = sessions(git_repo, script, "toolcall")
    session.run(AutoPolicy())
    [error] = [e for e in events if isinstance(e, FormatError)]
    assert "There is no tool named 'mean'" in error.observation
    assert PROSE_NUDGE not in error.observation and TOOLCALL_EXAMPLE in error.observation


def test_the_example_uses_the_profiles_own_tools(git_repo, tmp_path, sessions):
    profile = tmp_path / "bash-only.yaml"
    profile.write_text(
        "name: bash-only\nextends: swesmith\ntools:\n  bash:\n    docstring: runs a command\n"
        "    arguments:\n      - name: command\n        type: string\n"
        "        description: the command\n        required: true\n"
    )
    script = write_script(tmp_path / "s.jsonl", [PROSE])
    session, recorder, events = sessions(git_repo, script, "toolcall", prompt_profile=str(profile))
    session.run(AutoPolicy())
    [error] = [e for e in events if isinstance(e, FormatError)]
    assert '{"name": "bash", "arguments": {"command": "ls /testbed"}}' in error.observation
    assert "You can use: bash (command)." in error.observation
    assert "str_replace_editor" not in error.observation


@pytest.mark.parametrize(("dialect", "example"), [
    ("xml", "<function=str_replace_editor>\n<parameter=command>view</parameter>\n"
            "<parameter=path>/testbed</parameter>\n</function>"),
    ("text", "Thought: First I look at the files in the repository.\nAction: bash ls /testbed"),
])
def test_each_dialect_shows_a_complete_example(dialect, example, git_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [PROSE])
    session, recorder, events = sessions(git_repo, script, dialect)
    session.run(AutoPolicy())
    [error] = [e for e in events if isinstance(e, FormatError)]
    assert example in error.observation and "_NAME" not in error.observation


class GeneratingReplay(RecordingReplay):
    """A replay paced like a model that generates, so a rate means something."""

    generates = True


async def test_the_status_bar_counts_tokens_from_the_first_one(git_repo: Path):
    thought = VARIED  # (no repeating tail: it streams whole)
    session = make_app_session(git_repo, [(thought, Bash("ls"))], delay=0.01, chunk_size=4)
    session.backend = GeneratingReplay(session.backend.script, chunk_size=4, delay=0.01)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        status = main_screen(app).query_one(StatusBar)
        await watch.until(lambda: status.live_rate > 0, "a live rate while the turn streams")
        shown = status.render().plain
        assert main_screen(app).generating and status.live_tokens > 0
        assert f"~{status.live_tokens} tok · ~" in shown and " tok/s" in shown
        await watch.until(lambda: main_screen(app).pending is not None, "proposal 1")
        assert status.live_tokens == 0 and " tok · " not in status.render().plain


async def test_a_replay_shows_its_live_token_count_but_no_rate(git_repo: Path):
    thought = VARIED
    session = make_app_session(git_repo, [(thought, Bash("ls"))], delay=0.01, chunk_size=4)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        status = main_screen(app).query_one(StatusBar)
        await watch.until(lambda: status.live_tokens > 0, "a live token count")
        assert status.live_rate == 0 and "tok/s" not in status.render().plain


def test_the_headless_meter_shows_the_rate_while_the_turn_streams(monkeypatch):
    import app.headless as headless

    now = [100.0]
    monkeypatch.setattr(headless.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    meter = TurnMeter(out, live=True, redraw_every=0.0)
    meter(TurnStarted(1))
    now[0] = 102.0  # the first token after 2 s of prefill
    meter(TokenStreamed(1, "x" * 7))
    now[0] = 103.0
    meter(TokenStreamed(1, "y" * 35))  # 10 tokens in the second after the first
    drawn = out.getvalue().split("\r")
    assert drawn[1] == "  step 1: ~2 tokens · 2.0 s\x1b[K"
    assert drawn[2] == "  step 1: ~12 tokens · 3.0 s · ~10.0 tok/s\x1b[K"


@pytest.fixture(scope="module")
def short_window_model(tiny_model_dir, tmp_path_factory) -> Path:
    """The tiny model, its config saying it takes 600 positions."""
    copy = tmp_path_factory.mktemp("short") / "model"
    shutil.copytree(tiny_model_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 600}))
    return copy


def test_the_hf_backend_refuses_a_prompt_past_the_models_window(short_window_model):
    from agent_core.backends.faults import ContextTooLong
    from agent_core.backends.hf import HFBackend

    backend = HFBackend(str(short_window_model))
    try:
        assert backend.context_window == 600
        with pytest.raises(ContextTooLong) as refused:
            list(backend.stream(Prompt(text="word " * 700, max_new_tokens=16)))
        assert refused.value.limit == 600 and refused.value.prompt_tokens >= 700
        assert "takes at most 600 tokens (max_position_embeddings" in str(refused.value)
        assert list(backend.stream(Prompt(text="word " * 10, max_new_tokens=4)))  # within it: fine
    finally:
        backend.close()


def test_a_session_fits_its_prompts_to_the_models_window(short_window_model, git_repo, tmp_path):
    from agent_core.backends.hf import HFBackend
    from agent_core.executor import Executor
    from agent_core.session import Session, SessionConfig
    from agent_core.workspace import Workspace

    backend = HFBackend(str(short_window_model))
    config = SessionConfig(dialect="text", context_window=16_384, max_new_tokens=32, max_steps=1,
                           max_format_errors=1)
    session = Session(workspace=Workspace.open(git_repo), executor=Executor(git_repo),
                      backend=backend, issue="fix it", config=config)
    events: list = []
    session.subscribe(events.append)
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    assert session.config.context_window == 600
    said = [e.message for e in events if isinstance(e, Notice)]
    assert ("the model's own window (max_position_embeddings in its config) is 600 tokens: prompts "
            "are fitted to it, not to 16384") in said


async def test_the_status_bar_live_figures_on_a_slow_cpu():
    """A 0.5B model on a busy CPU writes 0.4 tok/s: that is said, not `0 tok/s`."""
    from tests.test_widgets import Harness

    status = StatusBar()
    async with Harness(status).run_test(size=(140, 3)) as pilot:
        status.turn_started(10.0)
        status.streamed("x" * 7, 20.0, rates=True)  # the first token, after 10 s of prefill
        status.streamed("y" * 14, 30.0, rates=True)  # 4 tokens in the 10 s after it
        await pilot.pause()
        assert "~6 tok · ~0.4 tok/s" in status.render().plain
        status.turn_ended()
        status.tokens_per_second = 0.43
        await pilot.pause()
        assert "~6 tok" not in status.render().plain and "0.4 tok/s" in status.render().plain
