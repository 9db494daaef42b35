"""One path vocabulary for the user: every view shows real paths, the model keeps reading `/testbed`.

The session mixes what used to show both forms side by side: file tools, whose answers name
`/testbed/...`, and a traceback, which names the real files. The model's prompt keeps `/testbed`;
the transcript, the timeline, the output pane, the step detail and a resumed session's history
show the real root.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from rich.console import Console

from agent_core.actions import Bash, StrReplaceEditor, Submit
from agent_core.policy import AutoPolicy
from app.headless import Transcript
from app.screens.main import MainScreen
from app.screens.step_detail import StepDetailScreen
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import make_session, showing
from tests.test_sandbox import needs_bwrap
from widgets.output_log import OutputLog
from widgets.step_timeline import StepTimeline

REPRO = "from calc.ops import average\n\naverage(None)\n"
TURNS = [
    ("Look at the module.", StrReplaceEditor(command="view", path="/testbed/calc/ops.py")),
    ("Reproduce it.", StrReplaceEditor(command="create", path="/testbed/repro.py", file_text=REPRO)),
    ("Run it.", Bash(f"cd /testbed && {sys.executable} repro.py")),
    ("Done.", Submit()),
]
SIZE = (160, 40)


def test_the_model_reads_testbed_and_the_transcript_real_paths(git_repo: Path):
    root = git_repo.resolve()
    session = make_session(git_repo, TURNS)
    out = io.StringIO()
    transcript = Transcript(Console(file=out, width=400), paths=session.executor.path_map)
    session.subscribe(transcript)
    try:
        session.run(AutoPolicy())
    finally:
        session.close()

    model = session.backend.prompt_text(3)
    assert "Here's the result of running `cat -n` on /testbed/calc/ops.py" in model
    assert "File created successfully at: /testbed/repro.py" in model
    assert 'File "/testbed/repro.py", line 3' in model
    assert str(root) not in model

    shown = out.getvalue()
    assert f"Here's the result of running `cat -n` on {root}/calc/ops.py" in shown
    assert f"File created successfully at: {root}/repro.py" in shown
    assert f'File "{root}/repro.py", line 3' in shown
    assert "/testbed" not in shown


def test_a_notice_naming_the_models_path_shows_the_real_root(git_repo: Path):
    view = ("Look again.", StrReplaceEditor(command="view", path="/testbed/repro.py"))
    session = make_session(git_repo, [TURNS[1], view, view, view, ("Done.", Submit())])
    out = io.StringIO()
    session.subscribe(Transcript(Console(file=out, width=400), paths=session.executor.path_map))
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    stuck = [line for line in out.getvalue().splitlines() if "stuck" in line]
    assert stuck and all(f"{git_repo.resolve()}/repro.py" in line for line in stuck), stuck
    assert "/testbed" not in out.getvalue()


def _auto_transcript(repo: Path, tmp_path: Path, sandbox: str) -> str:
    from tests.fixtures.tui import write_script
    from tests.test_cli import navtui

    script = write_script(tmp_path / "turns.jsonl", TURNS)
    result = navtui("--auto", "--script", str(script), "--issue", "average(None) fails",
                    "--sandbox", sandbox, str(repo), env={"COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_navtui_auto_prints_real_paths(git_repo: Path, tmp_path: Path):
    root = git_repo.resolve()
    shown = _auto_transcript(git_repo, tmp_path, "off")
    assert f"Here's the result of running `cat -n` on {root}/calc/ops.py" in shown
    assert f'File "{root}/repro.py", line 3' in shown
    assert "/testbed" not in shown


@needs_bwrap
def test_in_the_sandbox_the_transcript_shows_real_paths_too(git_repo: Path, tmp_path: Path):
    """Inside the sandbox the repository *is* /testbed, so the traceback says /testbed/repro.py;
    the user still reads the real root, except in the command exactly as it runs."""
    root = git_repo.resolve()
    shown = _auto_transcript(git_repo, tmp_path, "on")
    assert f'File "{root}/repro.py", line 3' in shown
    assert f"on {root}/calc/ops.py" in shown
    assert all("/testbed" not in line for line in shown.splitlines()
               if "in sandbox: /testbed = " not in line and not line.startswith("▶ cd /testbed"))


def test_the_path_map_shows_actions_and_observations_with_the_real_root(git_repo: Path):
    session = make_session(git_repo, TURNS)
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    paths, root = session.executor.path_map, str(git_repo.resolve())
    for record in session.records:
        shown = paths.record_to_user(record)
        assert "/testbed" not in repr((shown.action, shown.proposed.action, shown.observation))
    view = paths.record_to_user(session.records[0])
    assert view.action == StrReplaceEditor(command="view", path=f"{root}/calc/ops.py")
    # The record itself, which the log keeps and exports and resume read, is unchanged.
    assert session.records[0].action.path == "/testbed/calc/ops.py"
    assert "/testbed/calc/ops.py" in session.records[0].observation.output


def names(line: str, full: str) -> bool:
    """A timeline line is `full`, or its start cut with `…`."""
    return line == full or (line.endswith("…") and full.startswith(line[:-1]))


def _texts(main: MainScreen) -> tuple[list[str], str]:
    timeline = [entry.summary for entry in main.query_one(StepTimeline).entries.values()]
    return timeline, "\n".join(main.query_one(OutputLog).lines)


async def test_every_view_of_the_app_shows_real_paths_and_so_does_a_resumed_session(git_repo: Path):
    from agent_core.executor import Executor
    from agent_core.resume import resume_session
    from agent_core.trajectory import TrajectoryWriter, default_path, find_trajectory, repo_state_dir
    from agent_core.workspace import Workspace
    from tests.fixtures.tui import RecordingReplay

    root = str(git_repo.resolve())
    first = make_session(git_repo, TURNS)
    log = default_path(repo_state_dir(git_repo), first.id)
    first.subscribe(TrajectoryWriter(log))
    async with running_app(first, git_repo, size=SIZE, wait_for=None) as (app, pilot, watch):
        main = app.main
        for index in (1, 2, 3):
            await watch.until(lambda: main.pending is not None and main.pending.index == index,
                              f"proposal {index}")
            timeline, _ = _texts(main)
            assert timeline[-1].startswith("str_replace_editor" if index < 3 else "bash")
            assert "/testbed" not in timeline[-1], timeline[-1]
            await pilot.press("a")
        await watch.until(lambda: main.pending is not None and main.pending.index == 4, "proposal 4")
        timeline, output = _texts(main)
        assert names(timeline[0], f"str_replace_editor view {root}/calc/ops.py")
        assert names(timeline[1], f"str_replace_editor create {root}/repro.py")
        assert names(timeline[2], f"bash cd {root} && {sys.executable} repro.py")
        assert f'File "{root}/repro.py", line 3' in output and "/testbed" not in output
        main._show_step(1)
        await watch.until(lambda: showing(app, StepDetailScreen), "step 1 in detail")
        detail = "\n".join(str(static.render()) for static in app.screen.query("Static"))
        assert f"view {root}/calc/ops.py" in detail and f"on {root}/calc/ops.py" in detail
        assert "/testbed" not in detail
        await pilot.press("escape")
        await pilot.press("q", "y")
        await watch.until(lambda: app.return_code is not None, "exit")

    def resume(session_id: str):
        path = find_trajectory(git_repo, session_id)
        return resume_session(
            path, workspace=Workspace.open(git_repo), executor=Executor(git_repo),
            backend=RecordingReplay(git_repo.parent / "script.jsonl"),
            listeners=[TrajectoryWriter(path, resumed=True)],
        )

    def never(issue: str):
        raise AssertionError("a new session was started instead of resuming")

    async with running_app(never, git_repo, size=SIZE, resume=resume, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: type(app.screen).__name__ == "StartScreen" and app.screen.sessions,
                          "the start screen lists the session")
        await pilot.press("ctrl+r", "enter")
        await watch.until(lambda: app.main is not None and app.main.pending is not None,
                          "the resumed session's proposal")
        main = app.main
        await watch.until(lambda: any("Resumed" in str(n.render()) for n in main.query(".note")),
                          "the resumed history")
        history = next(str(n.render()) for n in main.query(".note") if "Resumed" in str(n.render()))
        first = history.splitlines()[1]
        assert first.startswith("1. ") and first.endswith(" (executed)")
        assert names(first[3:-len(" (executed)")], f"str_replace_editor view {root}/calc/ops.py")
        assert "/testbed" not in history
        timeline, output = _texts(main)
        assert all("/testbed" not in line for line in timeline)
        assert f'File "{root}/repro.py", line 3' in output and "/testbed" not in output
        model = main.session.backend.prompt_text(-1)  # (the ones before fast-forwarded the script)
        assert 'File "/testbed/repro.py", line 3' in model and root not in model
