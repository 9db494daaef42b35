"""The TUI with a sandboxed session: the status bar says so, the approval card says where the
command runs, and the command really runs at /testbed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_core.actions import Bash, Submit
from agent_core.executor import Executor
from agent_core.executor.sandbox import Plain, SandboxSettings, resolve_sandbox
from agent_core.session import Session, SessionConfig
from agent_core.workspace import Workspace
from tests.fixtures.running_app import running_app, waiting_on
from tests.fixtures.tui import ISSUE, RecordingReplay, write_script
from tests.test_sandbox import needs_bwrap
from widgets.status_bar import StatusBar

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap needs Linux")


def session_with(repo: Path, executor: Executor) -> Session:
    script = write_script(repo.parent / "script.jsonl",
                          [("Where?", Bash("pwd > where.txt")), ("Done.", Submit())])
    return Session(
        workspace=Workspace.open(repo), executor=executor, backend=RecordingReplay(script),
        issue=ISSUE, config=SessionConfig(dialect="toolcall", backend_info={"name": "replay"}),
    )


@needs_bwrap
async def test_sandboxed_session_shows_where_commands_run(git_repo: Path):
    launcher, _ = resolve_sandbox(SandboxSettings(mode="on"), git_repo)
    session = session_with(git_repo, Executor(git_repo, command_timeout=30, launcher=launcher))
    async with running_app(session, git_repo) as (app, pilot, watch):
        exposed = len(launcher.exposure.paths)
        assert app.main.query_one(StatusBar).sandbox == (f"sandbox · {exposed} exposed"
                                                         if exposed else "sandbox")
        assert app.main.query_one(StatusBar).tooltip == launcher.describe()
        card = app.main.query_one("#card")
        assert card.command_shown == "pwd > where.txt"
        assert card.border_subtitle == f"bash · {launcher.describe()}"
        assert launcher.describe().startswith(
            f"in sandbox: /testbed = {git_repo.resolve()}, network off")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "where.txt").read_text() == "/testbed\n"
        await pilot.press("q")
    session.close()


async def test_a_fallback_shows_no_sandbox(git_repo: Path):
    executor = Executor(git_repo, command_timeout=30,
                        launcher=Plain(git_repo, notice="sandbox off: bwrap cannot run here"))
    session = session_with(git_repo, executor)
    async with running_app(session, git_repo) as (app, pilot, watch):
        assert app.main.query_one(StatusBar).sandbox == "no sandbox"
        assert app.main.query_one("#card").border_subtitle == "bash"
        notes = [str(note.render()) for note in app.main.query(".note.-warning")]
        assert notes == ["sandbox off: bwrap cannot run here"]
        await pilot.press("q")
    session.close()


def test_the_transcript_says_where_each_bash_command_runs():
    from rich.console import Console

    from agent_core.actions import Read
    from agent_core.events import SessionStarted, StepProposed
    from agent_core.steps import ProposedStep
    from app.headless import Transcript

    console = Console(record=True, width=120)
    transcript = Transcript(console)
    where = "in sandbox: /testbed = /home/me/repo, network off"
    transcript(SessionStarted("id", "the issue", {"sandbox": where}))
    transcript(StepProposed(1, ProposedStep("look", Bash("ls"), "raw", "text"), "ls"))
    transcript(StepProposed(2, ProposedStep("read", Read("a.py"), "raw", "text"), "read a.py"))
    lines = console.export_text().splitlines()
    ran = lines.index("▶ ls")
    assert lines[ran + 1] == f"  {where}"
    assert lines.count(f"  {where}") == 1 and lines.count(where) == 1
