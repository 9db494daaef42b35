"""Load progress and per-turn token lines: the real backend's phases, headless output, the app."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from pathlib import Path

from agent_core.actions import Bash, Submit
from agent_core.backends.base import LoadProgress, Usage
from agent_core.backends.hf import HFBackend
from agent_core.events import TokenStreamed, TurnStarted, UsageReported
from app.headless import LoadLines, TurnMeter
from app.tui import LoadRelay, NavApp
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import Watch, make_session
from tests.test_session import FIX_SCRIPTS, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")


def test_the_hf_backend_reports_its_phases_in_order(tiny_model_dir: Path, tiny_adapter_dir: Path):
    seen: list[LoadProgress] = []
    HFBackend(str(tiny_model_dir), adapter=str(tiny_adapter_dir), progress=seen.append)
    phases = [p.phase for p in seen]
    assert phases[:2] == ["resolving", "importing transformers"]
    assert phases[-3:] == ["adapter", "tokenizer", "ready"]
    weights = [p for p in seen if p.phase == "loading weights" and p.total]
    assert weights and weights[-1].done == weights[-1].total
    assert [p.done for p in weights] == sorted(p.done for p in weights)
    assert [p.elapsed for p in seen] == sorted(p.elapsed for p in seen)


def test_headless_prints_the_phases_and_json_has_them(git_repo: Path, tiny_model_dir: Path):
    """--max-time 1 ends the random tiny model's first turn soon after the load."""
    command = [NAVTUI, "--auto", "--model", str(tiny_model_dir), "--max-time", "1", "--issue",
               "fix it", str(git_repo)]
    text = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert text.returncode == 2, text.stderr
    loading = [line for line in text.stderr.splitlines() if line.startswith("loading the model: ")]
    assert loading[0] == "loading the model: resolving · 0 s"
    assert loading[-1].startswith("loading the model: ready · ")
    assert any(line.startswith("loading the model: loading weights 24/24") for line in loading)

    as_json = subprocess.run([*command[:2], "--json", *command[2:]], capture_output=True,
                             text=True, timeout=300)
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    progress = [e for e in events if e["type"] == "LoadProgress"]
    assert progress[0] == {"type": "LoadProgress", "phase": "resolving", "done": 0, "total": 0,
                           "elapsed": progress[0]["elapsed"]}
    assert progress[-1]["phase"] == "ready"
    assert events.index(progress[-1]) < next(i for i, e in enumerate(events)
                                             if e["type"] == "SessionStarted")
    assert "loading the model" not in as_json.stderr


def test_a_replay_gets_token_lines_without_rates_and_quiet_has_none(git_repo: Path, tmp_path: Path):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    command = [NAVTUI, "--auto", "--script", str(script), "--issue", "fix it", str(git_repo)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    lines = [line for line in run.stderr.splitlines() if line.startswith("  step ")]
    assert len(lines) == len(FIX_SCRIPTS["text"])
    assert all(" tokens in " in line and "tok/s" not in line for line in lines)
    assert "loading the model" not in run.stderr
    quiet = subprocess.run([*command[:2], "--quiet", *command[2:]], capture_output=True,
                           text=True, timeout=120)
    assert quiet.returncode == 0 and "  step " not in quiet.stderr


def test_turn_meter_redraws_live_then_prints_the_real_count():
    out = io.StringIO()
    meter = TurnMeter(out, live=True, redraw_every=0.0)
    meter(TurnStarted(1))
    meter(TokenStreamed(1, "x" * 35))
    meter(TokenStreamed(1, "y" * 35))
    meter(UsageReported(1, Usage(new_tokens=18, tokens_per_second=12.5, time_to_first_token=0.4),
                        100, 4096))
    drawn = out.getvalue().split("\r")
    assert drawn[1].startswith("  step 1: ~10 tokens · ") and drawn[2].startswith("  step 1: ~20 ")
    assert drawn[-1].startswith("\x1b[K  step 1: 18 tokens in ")
    assert drawn[-1].endswith(" · 12.5 tok/s · first token after 0.4 s\n")


def test_load_lines_show_each_phase_and_throttle_counts():
    out = io.StringIO()
    lines = LoadLines(out, every=3600)
    for progress in [LoadProgress("resolving"), *[LoadProgress("loading weights", n, 5, 1.0)
                                                  for n in range(1, 6)], LoadProgress("ready", 0, 0, 2.4)]:
        lines(progress)
    assert out.getvalue().splitlines() == [
        "loading the model: resolving · 0 s",
        "loading the model: loading weights 1/5 · 1 s",
        "loading the model: loading weights 5/5 · 1 s",
        "loading the model: ready · 2 s",
    ]


async def test_the_app_shows_load_phases_and_the_model_while_loading(git_repo: Path):
    relay, release = LoadRelay(), threading.Event()

    def factory(issue: str):
        relay(LoadProgress("loading weights", 3, 10, 1.5))
        release.wait(30)
        return make_session(git_repo, [("Done.", Submit())], issue=issue)

    app = NavApp(factory, repo=git_repo, issue="fix it", load_relay=relay,
                 backend_info={"preset": "navigator-8b", "dialect": "toolcall"})
    watch = Watch()
    async with app.run_test(size=(120, 40), message_hook=watch):
        card = lambda: str(app.main.query_one("#card-command").render())  # noqa: E731
        await watch.until(lambda: app.main is not None and "3/10" in card(), "the load's phase")
        assert card().startswith("Loading the model… loading weights 3/10 · ")
        status = app.main.query_one("#status")
        assert (status.model, status.dialect, status.state) == ("navigator-8b", "toolcall", "loading")
        release.set()
        await watch.until(lambda: app.main.session is not None, "the session")
        await watch.until(lambda: "Loading" not in card(), "the card after loading")
        assert app._load_timer is None


async def test_a_failed_load_says_why_and_quitting_says_it_again_with_exit_1(git_repo: Path):
    from agent_core.backends.base import BackendError
    from widgets.status_bar import StatusBar

    def factory(issue: str):
        raise BackendError("model Qwen/Qwen3-8B is not on this machine: `hf download Qwen/Qwen3-8B`")

    async with running_app(factory, git_repo, size=(120, 40), issue="fix it",
                           wait_for=None) as (app, pilot, watch):
        card = lambda: str(app.main.query_one("#card-command").render())  # noqa: E731
        await watch.until(lambda: app.main is not None and "Could not start" in card(), "the error")
        assert "Qwen/Qwen3-8B is not on this machine: hf download Qwen/Qwen3-8B" in card()
        assert app._load_timer is None and app.main.query_one(StatusBar).state == "error"
        await pilot.press("q")  # nothing to lose: no question
        await watch.until(lambda: app.result_message, "the exit line")
    assert app.result_message.startswith("navtui: could not start: model Qwen/Qwen3-8B")
    assert "hf download Qwen/Qwen3-8B" in app.result_message
    assert app.return_code == 1


async def test_esc_while_the_model_loads_stops_it_and_q_leaves_at_once(git_repo: Path):
    import threading

    from tests.fixtures.tui import make_session

    release, built = threading.Event(), []

    def factory(issue: str):  # a load that takes until the test says so
        release.wait(30)
        built.append(make_session(git_repo, [("Look.", Bash("ls"))]))
        return built[-1]

    async with running_app(factory, git_repo, size=(80, 24), issue="fix it",
                           wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: app.main is not None and app.main.loading, "loading")
        await pilot.pause()
        offered = {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        assert "stop" in offered  # something runs: stop is offered
        await pilot.press("escape")
        await watch.until(lambda: app.main.load_stopped, "stopped")
        assert "Stopped" in str(app.main.query_one("#card-command").render())
        release.set()
        await watch.until(lambda: built, "the load ends")
        await app.workers.wait_for_complete()
        assert app.main.session is None  # the late session was dropped, not attached
        await pilot.press("q")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 3
