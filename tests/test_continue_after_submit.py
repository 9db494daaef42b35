"""After the submit the user can say "now also do X": the session goes on from its submitted
state with the message as the next turn, on the finish screen and when resuming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect

from agent_core.actions import Bash, Submit
from app.screens.finish import FinishScreen
from app.screens.message import MessageScreen
from tests.fixtures.running_app import running_app, waiting_on
from tests.fixtures.tui import make_session, showing
from tests.test_cli_tui import spawn_navtui
from tests.test_session import write_script

MORE = "now also write more.txt"
SCRIPT = ["Thought: done\nAction: submit", "Thought: more\nAction: bash echo more > more.txt",
          "Thought: done again\nAction: submit"]


async def test_the_finish_screen_continues_with_a_message(git_repo: Path):
    session = make_session(git_repo, [("Done.", Submit()), ("More.", Bash("echo more > more.txt")),
                                      ("Done again.", Submit())])
    async with running_app(session, git_repo, size=(120, 40), wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: waiting_on(app, 1), "the submit")
        await pilot.press("a")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        await pilot.press("c")
        await watch.until(lambda: showing(app, MessageScreen), "the message dialog")
        await pilot.press(*MORE)
        await pilot.press("enter")
        await watch.until(lambda: waiting_on(app, 2), "the model goes on")
        assert MORE in session.backend.prompt_text(1)  # the message is the model's next turn
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "the second submit")
        await pilot.press("a")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen again")
        assert "more.txt" in app.screen.patch
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 0 and (git_repo / "more.txt").read_text() == "more\n"


def first_run(git_repo: Path, tmp_path: Path) -> str:
    script = write_script(tmp_path / "s.jsonl", SCRIPT)
    first = subprocess.run(
        [sys.executable, "-m", "app.cli", "--plain", "--json", "--script", str(script),
         "--issue", "write a note", str(git_repo)],
        input="a\n", capture_output=True, text=True, timeout=120,
    )
    assert first.returncode == 0, first.stderr
    return json.loads(first.stdout.splitlines()[0])["session_id"]


def test_plain_resume_of_a_submitted_session_goes_on_with_a_message(git_repo: Path, tmp_path: Path):
    session_id = first_run(git_repo, tmp_path)
    again = subprocess.run(
        [sys.executable, "-m", "app.cli", "--plain", "--json", "--resume", session_id, str(git_repo)],
        input=f"{MORE}\na\na\n", capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 0, again.stderr
    events = [json.loads(line) for line in again.stdout.splitlines()]
    assert {"type": "UserMessage", "text": MORE}.items() <= next(
        e for e in events if e["type"] == "UserMessage").items()
    assert (git_repo / "more.txt").read_text() == "more\n"
    assert events[-1]["type"] == "SessionFinished" and events[-1]["reason"] == "submitted"


def test_resuming_a_submitted_session_in_the_app_offers_to_continue(git_repo: Path, tmp_path: Path):
    session_id = first_run(git_repo, tmp_path)
    child = spawn_navtui("--resume", session_id, str(git_repo), cwd=tmp_path)
    try:
        child.expect("Continue")
        child.send("c")
        child.expect("Your turn")
        child.send(MORE + "\r")
        child.expect("Approve")
        child.send("a")
        child.expect("done again")
        child.expect("Approve")
        child.send("a")
        child.expect("Keep")
        child.send("k")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before
    assert (git_repo / "more.txt").read_text() == "more\n"


def test_resuming_a_submitted_session_without_a_message_leaves_it_submitted(git_repo: Path,
                                                                           tmp_path: Path):
    from agent_core.trajectory import list_sessions

    session_id = first_run(git_repo, tmp_path)
    again = subprocess.run(
        [sys.executable, "-m", "app.cli", "--plain", "--resume", session_id, str(git_repo)],
        input="\n", capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert not (git_repo / "more.txt").exists()
    assert [(s.id, s.status) for s in list_sessions(git_repo)] == [(session_id, "submitted")]
