"""Esc (or ctrl+c) in the app stops a generation against a real HTTP server that has not sent
its first byte yet (a long prefill or a queue): the request is shut, the server sees the client
leave."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.executor import Executor
from agent_core.session import Session, SessionConfig
from agent_core.workspace import Workspace
from app.screens.main import MainScreen
from tests.fixtures.servers import Reply, ScriptedHTTPServer, content_chunk, sse
from tests.fixtures.running_app import running_app
from tests.fixtures.tui import ISSUE

SIZE = (120, 40)
# Far past the waits below: the test passes only if the stop does not wait for the server.
FIRST_BYTE_AFTER = 60.0


def slow_session(repo: Path, server: ScriptedHTTPServer) -> Session:
    server.queue(Reply(delay=FIRST_BYTE_AFTER, body=sse(content_chunk("late", finish="stop"))))
    return Session(
        workspace=Workspace.open(repo),
        executor=Executor(repo, command_timeout=30, path_alias="/testbed"),
        backend=OpenAIBackend(server.base_url, "navigator", timeout=120),
        issue=ISSUE,
        config=SessionConfig(dialect="toolcall", path_alias="/testbed"),
    )


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_escape_and_ctrl_c_stop_a_generation_waiting_for_its_first_byte(
    git_repo: Path, scripted_http: ScriptedHTTPServer, key: str
):
    session = slow_session(git_repo, scripted_http)
    async with running_app(session, git_repo, size=SIZE, wait_for=None) as (app, pilot, watch):
        main = app.screen if isinstance(app.screen, MainScreen) else app.main
        await watch.until(lambda: main.generating and scripted_http.requests, "request sent")
        await pilot.press(key)
        await watch.until(lambda: not main.generating and main.driver.paused, "stopped",
                          timeout=10)
        await watch.until(lambda: scripted_http.requests[0].disconnected_at is not None,
                          "the server saw the client leave", timeout=10)
        assert session.pending is None


async def test_a_busy_servers_wait_is_shown_in_the_status_bar(
    git_repo: Path, scripted_http: ScriptedHTTPServer
):
    """A 300 s busy wait used to show nothing on screen: the status says the wait, its reason
    and the next try."""
    from widgets.status_bar import StatusBar

    scripted_http.queue(Reply(status=429, headers={"Retry-After": "30",
                                                   "Content-Type": "application/json"},
                              body=['{"error": {"message": "queue full"}}']))
    session = Session(
        workspace=Workspace.open(git_repo),
        executor=Executor(git_repo, command_timeout=30, path_alias="/testbed"),
        backend=OpenAIBackend(scripted_http.base_url, "navigator", timeout=120),
        issue=ISSUE,
        config=SessionConfig(dialect="toolcall", path_alias="/testbed"),
    )
    async with running_app(session, git_repo, size=SIZE, wait_for=None) as (app, pilot, watch):
        main = app.screen if isinstance(app.screen, MainScreen) else app.main
        status = main.query_one(StatusBar)
        await watch.until(lambda: "waiting: server busy (HTTP 429)" in status.render().plain,
                          "the wait is on screen", timeout=15)
        assert re.search(r"next try in 3[01] s", status.render().plain), "Retry-After + jitter"
        await pilot.press("escape")
        await watch.until(lambda: not main.generating, "stopped", timeout=10)
