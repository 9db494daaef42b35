"""The app in a real terminal (tmux) at 80x24: the footer, ctrl+c, and a model that will not load."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.tmux import TmuxPane
from tests.test_session import write_script

SLOW = "Thought: wait for it\nAction: bash sleep 30; echo done"


def test_the_footer_at_80x24_always_shows_quit_and_help(git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane):
    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash ls", SLOW, SLOW])
    tmux_pane.start_navtui("--script", str(script), "--issue", "look around", str(git_repo), cwd=tmp_path)

    def footer_shows(*keys: str) -> None:
        footer = tmux_pane.lines()[-1]
        for key in (*keys, "q Quit", "? Help"):
            assert key in footer, footer

    tmux_pane.wait_for("Approve")
    footer_shows("a Approve")
    tmux_pane.send("a")
    tmux_pane.wait_for("sleep 30")
    tmux_pane.wait_for("u Undo")
    footer_shows("a Approve", "u Undo")  # the most keys at once: a proposal, and undo
    tmux_pane.send("s")  # the steps panel, focused
    tmux_pane.wait_for("╭─ Steps")
    tmux_pane.send("Up")  # step 1 chosen: rewind joins the keys
    tmux_pane.wait_for("w Rewind")
    footer_shows("a Approve", "u Undo")
    tmux_pane.send("s", "a")
    tmux_pane.wait_for("esc Stop")  # a command runs: stop is offered
    footer_shows("esc Stop")


def test_ctrl_c_stops_the_command_then_twice_asks_to_quit(git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane):
    script = write_script(tmp_path / "s.jsonl", [SLOW, "Thought: next\nAction: bash pwd"])
    tmux_pane.start_navtui("--script", str(script), "--issue", "wait", str(git_repo), cwd=tmp_path)
    tmux_pane.wait_for("Approve")
    tmux_pane.send("a")
    tmux_pane.wait_for("esc Stop")
    tmux_pane.send("C-c")
    tmux_pane.wait_for("interrupted and killed")  # the command was killed
    tmux_pane.wait_for("╭─ Step 2")  # and the model proposes the next step
    assert "Quit navtui?" not in tmux_pane.screen()
    tmux_pane.send("C-c")  # nothing runs: within 2 s of the stop it asks, later it says to press again
    if "ctrl+c again" in tmux_pane.wait_for_any("ctrl+c again", "Quit navtui?"):
        tmux_pane.send("C-c")
    tmux_pane.wait_for("Quit navtui?")
    tmux_pane.send("y")
    assert tmux_pane.exit_status() == 3
    assert "navtui --resume " in tmux_pane.screen()


def test_a_model_that_will_not_load_says_why_on_screen_and_exits_1(
    git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane
):
    env = {"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_OFFLINE": "1"}
    tmux_pane.start_navtui("--model", "navigator-8b", "--issue", "fix it", str(git_repo),
                           cwd=tmp_path, env=env)
    shown = tmux_pane.wait_for("Could not start", timeout=120)
    assert "hf download" in shown and "error" in tmux_pane.lines()[0], shown
    tmux_pane.send("q")
    assert tmux_pane.exit_status() == 1
    assert "hf download Qwen/Qwen3-8B" in tmux_pane.screen()


async def test_a_server_that_is_not_there_is_shown_with_the_hint_and_exits_1(git_repo: Path):
    from agent_core.backends.openai_compat import OpenAIBackend
    from agent_core.executor import Executor
    from agent_core.session import Session, SessionConfig
    from agent_core.workspace import Workspace
    from app.screens.finish import FinishScreen
    from tests.fixtures.running_app import running_app
    from tests.fixtures.tui import showing
    from tests.test_model_errors import closed_port_url

    session = Session(
        workspace=Workspace.open(git_repo), executor=Executor(git_repo, command_timeout=30),
        backend=OpenAIBackend(closed_port_url() + "/v1", "served-model"), issue="fix it",
        config=SessionConfig(dialect="toolcall", backend_info={"name": "openai"}),
    )
    async with running_app(session, git_repo, size=(80, 24), wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: showing(app, FinishScreen), "the finish screen", timeout=60)
        message = str(app.screen.query_one("#finish-message").render())
        assert "cannot connect" in message and "Is the server running?" in message
        await pilot.press("q")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 1
    assert "Is the server running?" in app.result_message and "`" not in message


def test_the_finish_screen_at_80x24_shows_every_choice(git_repo: Path, tmp_path: Path, tmux_pane: TmuxPane):
    script = write_script(tmp_path / "s.jsonl", ["Thought: note\nAction: bash echo n > n.txt",
                                                "Thought: done\nAction: submit"])
    tmux_pane.start_navtui("--script", str(script), "--issue", "a note", str(git_repo), cwd=tmp_path)
    tmux_pane.wait_for("Approve")
    tmux_pane.send("t")  # auto mode: on to the finish
    shown = tmux_pane.wait_for("Continue (c)")
    assert "Keep (k)" in shown and "Discard (x)" in shown
    tmux_pane.wait_for("q Quit")
    footer = tmux_pane.lines()[-1]
    assert "c Continue" in footer and "q Quit" in footer, footer
    tmux_pane.send("q")
    assert tmux_pane.exit_status() == 0


def test_dropping_one_hunk_of_two_in_a_real_terminal(tmp_path: Path, tmux_pane: TmuxPane):
    """Per-hunk review as a user does it at 80x24: the card lists the edit's two hunks, `x` drops
    the first, `a` runs the rest; the file holds only the kept hunk."""
    from tests.fixtures.repos import make_repo

    original = "".join(f"line {n}\n" for n in range(1, 21))
    repo = make_repo(tmp_path / "repo", {"notes.txt": original})
    block = "".join(f"line {n}\n" for n in range(3, 11)).replace("line 3\n", "line three\n")
    edit = "Thought: two lines\nAction: edit notes.txt 3 10\n" + block.replace("line 10", "line ten")
    script = write_script(tmp_path / "s.jsonl", [edit, "Thought: look\nAction: bash true"])
    tmux_pane.start_navtui("--script", str(script), "--issue", "rename", str(repo), cwd=tmp_path)
    tmux_pane.wait_for("hunk 1/2")
    shown = tmux_pane.wait_for("x Drop")
    assert "q Quit" in tmux_pane.lines()[-1] and "? Help" in tmux_pane.lines()[-1], shown
    tmux_pane.send("x")  # hunk 1 dropped; hunk 2 is current, the card scrolled to it
    tmux_pane.wait_for("▶ hunk 2/2 · kept")
    tmux_pane.send("[")
    tmux_pane.wait_for("▶ hunk 1/2 · dropped")
    tmux_pane.send("a")
    tmux_pane.wait_for("╭─ Step 2")
    assert (repo / "notes.txt").read_text() == original.replace("line 10\n", "line ten\n")
    tmux_pane.send("q")
    tmux_pane.wait_for("Quit navtui?")
    tmux_pane.send("y")
    assert tmux_pane.exit_status() == 3  # (quit by the user, the session saved)
