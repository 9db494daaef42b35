"""Pilot tests: every decision path of the app, on real temp repos with the real replay backend."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from agent_core.actions import Bash, StrReplaceEditor, Submit
from agent_core.steps import Origin
from app.screens.allow import AllowPrefixScreen, suggested_prefix
from app.screens.confirm import ConfirmScreen
from app.screens.edit import EditScreen
from app.screens.finish import FinishScreen
from app.screens.help import HelpScreen
from app.screens.main import MainScreen
from app.screens.message import MessageScreen
from app.screens.quit import QuitScreen
from app.screens.reject import RejectScreen
from app.tui import NavApp
from tests.fixtures.repos import git
from tests.fixtures.running_app import SIZE, main_screen, running_app, waiting_on
from tests.fixtures.tui import ISSUE, Watch, make_session, showing
from widgets.diff_view import DiffView
from widgets.step_timeline import StepTimeline

FIX = StrReplaceEditor(
    command="str_replace", path="calc/ops.py",
    old_str="    return sum(values) / (len(values) + 1)\n", new_str="    return sum(values) / len(values)\n",
)


async def test_approve_runs_the_action_and_submit_opens_the_finish_screen(git_repo: Path):
    session = make_session(git_repo, [("Write a note.", Bash("echo hello > note.txt")), ("Done.", Submit())])
    async with running_app(session, git_repo) as (app, pilot, watch):
        main = main_screen(app)
        assert main.query_one("#card").command_shown == "echo hello > note.txt"
        assert not (git_repo / "note.txt").exists()
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "note.txt").read_text() == "hello\n"
        assert main.query_one(StepTimeline).entries[1].status == "executed"
        assert "note.txt" in main.session_diff
        await pilot.press("a")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 0
    assert (git_repo / "note.txt").exists()


async def test_always_allow_a_prefix_never_covers_a_compound_command(git_repo: Path):
    session = make_session(git_repo, [
        ("Status.", Bash("git status --short")),
        ("Status again.", Bash("git status")),
        ("Sneaky.", Bash("git status && touch sneaky.txt")),
    ])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("A")
        await watch.until(lambda: showing(app, AllowPrefixScreen), "allow dialog")
        assert app.screen.query_one("#prefix").value == "git status"
        await pilot.press("enter")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3 (2 approved by the rule)")
        statuses = {i: e.status for i, e in main_screen(app).query_one(StepTimeline).entries.items()}
        assert statuses == {1: "executed", 2: "executed", 3: "pending"}
        assert not (git_repo / "sneaky.txt").exists()
        assert main_screen(app).query_one("#status").policy == "ask (+1 rules)"


async def test_always_allow_a_kind(git_repo: Path):
    view = StrReplaceEditor(command="view", path="calc/ops.py")
    session = make_session(git_repo, [("Look.", view), ("Look again.", view), ("Run.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("A")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3 (view allowed)")
        assert [r.index for r in session.records] == [1, 2]


def test_suggested_prefix_takes_two_words_for_git_like_tools():
    assert suggested_prefix("git status --short") == "git status"
    assert suggested_prefix("pytest -q tests && rm -rf /") == "pytest"
    assert suggested_prefix("") == ""


async def test_reject_with_feedback_reaches_the_next_prompt(git_repo: Path):
    session = make_session(git_repo, [("Clean up.", Bash("rm -rf calc")), ("Fine.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("r")
        await watch.until(lambda: showing(app, RejectScreen), "reject dialog")
        await pilot.press(*"never delete the package")
        await pilot.press("enter")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "calc/ops.py").exists()
        assert "never delete the package" in session.backend.prompt_text(1)
        assert "never delete the package" not in session.backend.prompt_text(0)
        assert main_screen(app).query_one(StepTimeline).entries[1].status == "rejected"


async def test_edit_runs_the_edited_action_and_shows_parse_errors(git_repo: Path):
    session = make_session(git_repo, [("Write.", Bash("echo wrong > out.txt")), ("Next.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("e")
        await watch.until(lambda: showing(app, EditScreen), "edit dialog")
        area = app.screen.query_one("#action-text")
        assert "echo wrong > out.txt" in area.text
        area.load_text("this is not an action")
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, EditScreen)
        assert "Could not parse" in str(app.screen.query_one("#edit-error").render())
        area.load_text('<tool_call>\n{"name": "bash", "arguments": {"command": "echo right > out.txt"}}\n</tool_call>')
        await pilot.press("ctrl+s")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "out.txt").read_text() == "right\n"
        record = session.records[0]
        assert record.action == Bash("echo right > out.txt")
        assert main_screen(app).query_one(StepTimeline).entries[1].summary.endswith("(edited)")


async def test_undo_and_rewind_restore_files(git_repo: Path):
    turns = [(f"Step {n}.", Bash(f"echo {n} > f{n}.txt")) for n in range(1, 6)]
    session = make_session(git_repo, [("Fix.", FIX), *turns])
    fixed = "return sum(values) / len(values)"
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        for index in (1, 2, 3):
            await watch.until(lambda: waiting_on(app, index), f"proposal {index}")
            await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 4), "proposal 4")
        assert fixed in (git_repo / "calc/ops.py").read_text()
        assert (git_repo / "f2.txt").exists()
        await pilot.press("u")
        await watch.until(lambda: waiting_on(app, 3), "new proposal 3 after undo")
        assert not (git_repo / "f2.txt").exists() and (git_repo / "f1.txt").exists()
        assert main_screen(app).query_one(DiffView).documents["step"].diff == session.records[-1].diff
        assert "f1.txt" in session.records[-1].diff
        timeline = main_screen(app).query_one(StepTimeline)
        assert sorted(timeline.entries) == [1, 2, 3]
        timeline.highlight_step(1)
        await pilot.press("w")
        await watch.until(lambda: showing(app, ConfirmScreen), "rewind asks first")
        assert app.screen.explanation.startswith("Step 2 is undone")
        await pilot.press("n")
        await watch.until(lambda: waiting_on(app, 3), "back to proposal 3: nothing rewound")
        assert (git_repo / "f1.txt").exists()
        await pilot.press("w")
        await watch.until(lambda: showing(app, ConfirmScreen), "rewind asks again")
        await pilot.press("y")
        await watch.until(lambda: waiting_on(app, 2), "new proposal 2 after rewind")
        assert not (git_repo / "f1.txt").exists()
        assert fixed in (git_repo / "calc/ops.py").read_text()
        assert [r.index for r in session.records] == [1]


async def test_rewind_from_the_step_detail_screen(git_repo: Path):
    turns = [(f"Step {n}.", Bash(f"echo {n} > f{n}.txt")) for n in range(1, 5)]
    session = make_session(git_repo, turns)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        for index in (1, 2):
            await watch.until(lambda: waiting_on(app, index), f"proposal {index}")
            await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3")
        timeline = main_screen(app).query_one(StepTimeline)
        timeline.focus()
        timeline.highlight_step(1)
        await pilot.press("enter")
        await watch.until(lambda: type(app.screen).__name__ == "StepDetailScreen", "step detail")
        assert app.screen.record.index == 1 and app.screen.can_rewind
        await pilot.press("w")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2 after rewind")
        assert (git_repo / "f1.txt").exists() and not (git_repo / "f2.txt").exists()


async def test_own_command_is_checkpointed_and_the_model_sees_it(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("Then.", Bash("cat mine.txt"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("m")
        await watch.until(lambda: showing(app, MessageScreen), "message dialog")
        await pilot.press(*"!echo mine > mine.txt")
        await pilot.press("enter")
        # The model's proposal still waits (now as step 2), beside the command's output.
        await watch.until(lambda: waiting_on(app, 2), "the proposal, still pending")
        assert (git_repo / "mine.txt").read_text() == "mine\n"
        user = [r for r in session.records if r.origin is Origin.USER]
        assert [r.action for r in user] == [Bash("echo mine > mine.txt")]
        assert main_screen(app).pending.step.action == Bash("ls")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3")
        assert "echo mine > mine.txt" in session.backend.prompt_text(1)
        assert [r.origin for r in session.records] == [Origin.USER, Origin.MODEL]
        assert main_screen(app).query_one(StepTimeline).entries[1].status == "user"


async def test_esc_stops_your_own_command_and_the_proposal_still_waits(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("Then.", Bash("pwd"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("m")
        await watch.until(lambda: showing(app, MessageScreen), "message dialog")
        await pilot.press(*"!sleep 30; echo done")
        await pilot.press("enter")
        main = main_screen(app)
        await watch.until(lambda: app.screen is main and main.running, "your command runs")
        await pilot.pause()
        shown = {binding.binding.action for binding in app.screen.active_bindings.values()
                 if binding.enabled and binding.binding.show}
        assert "stop" in shown and "approve" not in shown  # the footer offers stop, not approve
        await pilot.press("escape")
        await watch.until(lambda: waiting_on(app, 2), "the proposal, still pending")
        record = next(r for r in session.records if r.origin is Origin.USER)
        assert "done" not in record.observation.output
        assert main.pending.step.action == Bash("ls") and not main.running


async def test_message_to_the_model_reaches_the_next_prompt(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls")), ("Then.", Bash("pwd"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("m")
        await watch.until(lambda: showing(app, MessageScreen), "message dialog")
        await pilot.press(*"the bug is in average")
        await pilot.press("enter")
        await watch.until(lambda: showing(app, MainScreen), "back on the main screen")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert "the bug is in average" in session.backend.prompt_text(1)


async def test_auto_toggle_runs_everything_until_the_finish(git_repo: Path):
    turns = [(f"Step {n}.", Bash(f"echo {n} > f{n}.txt")) for n in range(1, 4)]
    session = make_session(git_repo, [*turns, ("Fix.", FIX), ("Done.", Submit())])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        assert [r.index for r in session.records] == [1, 2, 3, 4, 5]
        assert "return sum(values) / len(values)" in (git_repo / "calc/ops.py").read_text()
        assert main_screen(app).query_one("#status").policy == "auto"


async def test_stop_generation_then_go_on(git_repo: Path):
    long_thought = "thinking " * 400
    session = make_session(git_repo, [(long_thought, Bash("ls")), ("Next.", Bash("pwd"))],
                           delay=0.01, chunk_size=4)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        main = main_screen(app)
        await watch.until(lambda: main.generating and main.query_one("#thoughts").text, "streaming")
        await pilot.press("escape")
        await watch.until(lambda: not main.generating and main.driver.paused, "stopped")
        assert session.pending is None and main.check_action("continue", ()) is True
        await pilot.press("g")
        await watch.until(lambda: waiting_on(app, 1), "a proposal after going on")
        assert session.pending.step.action == Bash("pwd")


async def test_escape_kills_a_running_command(git_repo: Path):
    session = make_session(git_repo, [("Wait.", Bash("sleep 60")), ("Next.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: main_screen(app).running, "running")
        await pilot.press("escape")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2 after the kill", timeout=20)
        observation = session.records[0].observation
        assert observation is not None and "interrupted" in (observation.error or "")


async def test_quit_confirms_and_explains_how_to_come_back(git_repo: Path):
    session = make_session(git_repo, [("Write.", Bash("echo x > x.txt")), ("More.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2) and "x.txt" in app.main.session_diff, "step 2")
        await pilot.press("q")
        await watch.until(lambda: showing(app, QuitScreen), "quit dialog")
        explanation = app.screen.explanation
        assert "x.txt" in explanation and f"navtui --resume {session.id} {git_repo}" in explanation
        await pilot.press("n")
        await watch.until(lambda: waiting_on(app, 2), "back to proposal 2")
        await pilot.press("q", "y")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 3
    assert session.finished is not None and session.finished.reason == "quit"
    assert (git_repo / "x.txt").exists()


async def test_the_quit_question_lists_files_the_session_changes_while_it_is_open(git_repo: Path):
    gate = git_repo / ".git" / "go"  # step 2 writes b.txt once the test says so
    turns = [("Write a.", Bash("echo a > a.txt")),
             ("Write b.", Bash(f"while [ ! -e {gate} ]; do sleep 0.05; done; echo b > b.txt")),
             ("Wait.", Bash(f"while [ ! -e {gate}.2 ]; do sleep 0.05; done")), ("Done.", Submit())]
    session = make_session(git_repo, turns)
    async with running_app(session, git_repo) as (app, pilot, watch):
        app.main.driver.diffs.unseen_pace = 600.0  # a session diff no one sees: not again soon
        await pilot.press("t")
        await watch.until(lambda: "a.txt" in app.main.session_diff, "a.txt in the session diff")
        heard: list[bool] = []  # what the session thread hears: is the session diff seen?
        real = app.main.driver.show_session_diff
        app.main.driver.show_session_diff = lambda shown: (heard.append(shown), real(shown))[1]
        await pilot.press("q")
        await watch.until(lambda: showing(app, QuitScreen), "quit dialog")
        body = app.screen.query_one(".dialog-body", Static)
        assert "a.txt" in str(body.render()) and "b.txt" not in str(body.render())
        gate.touch()  # auto mode goes on behind the question: step 2 writes b.txt
        await watch.until(lambda: "b.txt" in str(body.render()), "b.txt in the open question", timeout=20)
        assert "a.txt, b.txt" in app.screen.explanation
        await pilot.press("n")
        await watch.until(lambda: app.screen is app.main, "back to the session")
        assert heard == [True, False]  # the output tab again: the slow pace
        Path(f"{gate}.2").touch()
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")


async def test_ctrl_q_asks_while_a_command_runs_and_otherwise_quits_printing_the_way_back(
    git_repo: Path,
):
    session = make_session(git_repo, [("Wait.", Bash("sleep 30")), ("More.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: app.main.running, "the command runs")
        await pilot.press("ctrl+q")
        await watch.until(lambda: showing(app, QuitScreen), "ctrl+q asks while something runs")
        await pilot.press("n")
        await pilot.press("escape")  # stop it
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("ctrl+q")  # nothing runs: out at once
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 3
    assert session.finished is not None and session.finished.reason == "quit"
    assert app.result_message.endswith(f"navtui --resume {session.id} {git_repo}")


async def test_plain_text_places_show_no_markdown_code_marks(git_repo: Path):
    issue = "# `average()` is off by one\n\n`average([2, 4, 6])` returns 3.0."
    session = make_session(git_repo, [("Write.", Bash("echo x > x.txt")), ("More.", Bash("ls")),
                                      ("Again.", Bash("pwd"))], issue=issue)
    async with running_app(session, git_repo) as (app, pilot, watch):
        from widgets.issue_pane import IssuePane

        assert str(app.main.query_one(IssuePane).title) == "Issue: average() is off by one"
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("u")
        await watch.until(lambda: waiting_on(app, 1), "proposal 1 again")
        notes = [str(n.render()) for n in app.main.query(".note")]
        assert any("Back to step 0" in n for n in notes) and not any("`" in n for n in notes)
        await pilot.press("A")
        await watch.until(lambda: showing(app, AllowPrefixScreen), "prefix dialog")
        await pilot.press("enter")
        await watch.until(lambda: app._notifications, "the toast")
        assert not any("`" in n.message for n in app._notifications)


async def test_finish_commit_to_branch_keeps_the_checkout(git_repo: Path):
    session = make_session(git_repo, [("Fix.", FIX), ("Done.", Submit())])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        assert app.screen.query_one("#branch-name").value == "navtui/average-is-off-by-one"
        await pilot.press("b")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 0
    assert "navtui/average-is-off-by-one" in app.result_message
    assert git(git_repo, "symbolic-ref", "--short", "HEAD").strip() == "main"
    shown = git(git_repo, "show", "navtui/average-is-off-by-one:calc/ops.py")
    assert "return sum(values) / len(values)" in shown
    # What the message says is true: the change moved to the branch, the checkout is as before.
    assert git(git_repo, "status", "--porcelain") == ""
    assert "the working tree is back to how it was before the session" in app.result_message
    assert "git switch navtui/average-is-off-by-one" in app.result_message


async def test_finish_save_patch(git_repo: Path, tmp_path: Path):
    session = make_session(git_repo, [("Fix.", FIX), ("Done.", Submit())])
    target = tmp_path / "fix.patch"
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        app.screen.query_one("#patch-path").value = str(target)
        await pilot.press("p")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert "return sum(values) / len(values)" in target.read_text()
    assert str(target) in app.result_message


async def test_finish_screen_says_how_it_ended_once_and_shows_the_diff_as_is(git_repo: Path):
    session = make_session(git_repo, [("Fix.", FIX), ("Done.", Submit())])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        await pilot.pause()
        assert str(app.screen.query_one("#finish-title").render()) == "The model submitted a fix."
        assert not app.screen.query("#finish-message")
        view = app.screen.query_one("#finish-diff", DiffView)
        lines = [view.render_line(y).text.rstrip() for y in range(view.size.height)]
        assert view.file_titles == ["calc/ops.py  +1 -1"] and lines[0] == " calc/ops.py  +1 -1"
        assert [line[1:] for line in lines[2:7]] == [  # (after the view's one-cell margin)
            "",
            " def average(values):",
            '     """Mean of a non-empty list."""',
            "-    return sum(values) / (len(values) + 1)",
            "+    return sum(values) / len(values)",
        ]


async def test_finish_screen_shows_why_a_session_stopped(git_repo: Path):
    session = make_session(git_repo, [("Fix.", FIX), ("Done.", Submit())], max_steps=1)
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        assert str(app.screen.query_one("#finish-title").render()) == "The session stopped (limit)."
        assert str(app.screen.query_one("#finish-message").render()) == session.finished.message


async def test_finish_discard_restores_the_users_own_state(git_repo: Path):
    (git_repo / "README.md").write_text("# calc\n\nthe user's uncommitted edit\n")
    (git_repo / "scratch.txt").write_text("untracked\n")
    session = make_session(git_repo, [("Fix.", FIX), ("Note.", Bash("echo n > new.txt")), ("Done.", Submit())])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        assert (git_repo / "new.txt").exists()
        await pilot.press("x")
        await watch.until(lambda: showing(app, ConfirmScreen), "discard asks first")
        assert "calc/ops.py" in app.screen.explanation and "new.txt" in app.screen.explanation
        await pilot.press("n")
        await watch.until(lambda: showing(app, FinishScreen), "back at the finish screen")
        assert (git_repo / "new.txt").exists()
        await pilot.press("x")
        await watch.until(lambda: showing(app, ConfirmScreen), "discard asks again")
        await pilot.press("y")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert not (git_repo / "new.txt").exists()
    assert "(len(values) + 1)" in (git_repo / "calc/ops.py").read_text()
    assert (git_repo / "README.md").read_text() == "# calc\n\nthe user's uncommitted edit\n"
    assert (git_repo / "scratch.txt").read_text() == "untracked\n"


async def test_start_screen_takes_the_issue_and_builds_the_session(git_repo: Path):
    built: list[str] = []

    def factory(issue: str):
        built.append(issue)
        return make_session(git_repo, [("Look.", Bash("ls"))], issue=issue)

    async with running_app(factory, git_repo, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: type(app.screen).__name__ == "StartScreen", "start screen")
        await pilot.press("ctrl+s")
        assert "empty" in str(app.screen.query_one("#start-error").render())
        app.screen.query_one("#issue-editor").load_text(ISSUE)
        await pilot.press("ctrl+j")
        await watch.until(lambda: waiting_on(app, 1), "proposal 1")
        assert built == [ISSUE]
        assert main_screen(app).session.issue == ISSUE


async def test_quit_then_resume_from_the_start_screen(git_repo: Path):
    from agent_core.executor import Executor
    from agent_core.resume import resume_session
    from agent_core.trajectory import TrajectoryWriter, default_path, find_trajectory, repo_state_dir
    from agent_core.workspace import Workspace
    from tests.fixtures.tui import RecordingReplay

    turns = [("One.", Bash("echo 1 > one.txt")), ("Two.", Bash("echo 2 > two.txt")), ("Done.", Submit())]
    first = make_session(git_repo, turns)
    log = default_path(repo_state_dir(git_repo), first.id)
    first.subscribe(TrajectoryWriter(log))
    async with running_app(first, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("q", "y")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 3 and (git_repo / "one.txt").exists()

    resumed: list = []

    def resume(session_id: str):
        path = find_trajectory(git_repo, session_id)
        session = resume_session(
            path, workspace=Workspace.open(git_repo), executor=Executor(git_repo),
            backend=RecordingReplay(git_repo.parent / "script.jsonl"),
            listeners=[TrajectoryWriter(path, resumed=True)],
        )
        resumed.append(session)
        return session

    def never(issue: str):
        raise AssertionError("a new session was started instead of resuming")

    async with running_app(never, git_repo, resume=resume, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: type(app.screen).__name__ == "StartScreen" and app.screen.sessions,
                          "the start screen lists the session")
        await pilot.press("ctrl+r", "enter")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2 of the resumed session")
        assert resumed[0].id == first.id
        timeline = main_screen(app).query_one(StepTimeline)
        assert {i: e.status for i, e in timeline.entries.items()} == {1: "executed", 2: "pending"}
        history = [str(n.render()) for n in main_screen(app).query(".note")]
        assert any("Resumed" in n and "1. bash echo 1 > one.txt (executed)" in n for n in history)
        await watch.until(lambda: "one.txt" in main_screen(app).session_diff, "session diff after resume")
        assert main_screen(app).session.pending.step.action == Bash("echo 2 > two.txt")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 3), "proposal 3")
        assert (git_repo / "two.txt").exists()


def test_the_path_to_the_first_frame_imports_no_torch():
    import subprocess
    import sys

    code = (
        "import sys, app.cli, app.tui, app.demo\n"
        "from app.tui import NavApp\n"
        "print(','.join(sorted(m for m in ('torch', 'transformers', 'peft') if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_forked_children_do_not_inherit_the_apps_signal_handlers():
    """pexpect forks the session's bash; the app's SIGCONT handler would crash in the child."""
    import os
    import signal

    import app.tui  # noqa: F401  (registers the at-fork hook)

    previous = signal.signal(signal.SIGCONT, lambda *_: None)
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0 if signal.getsignal(signal.SIGCONT) == signal.SIG_DFL else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        signal.signal(signal.SIGCONT, previous)


async def test_the_demo_session_fixes_the_demo_repo(tmp_path: Path):
    import subprocess

    from app.demo import ISSUE as DEMO_ISSUE
    from app.demo import demo_session, make_demo_repo

    repo = make_demo_repo(tmp_path / "stats")
    failing = subprocess.run(["python3", "-m", "unittest", "-q"], cwd=repo, capture_output=True)
    assert failing.returncode != 0
    async with running_app(demo_session(repo, delay=0.0), repo) as (app, pilot, watch):
        assert main_screen(app).issue == DEMO_ISSUE
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 0
    assert subprocess.run(["python3", "-m", "unittest", "-q"], cwd=repo, capture_output=True).returncode == 0
    from agent_core.trajectory import list_sessions

    assert [s.status for s in list_sessions(repo)] == ["submitted"]


async def test_command_palette_offers_the_decisions_that_apply_now(git_repo: Path):
    session = make_session(git_repo, [("Write.", Bash("echo p > p.txt")), ("More.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        commands = {c.title: c.callback for c in app.get_system_commands(app.screen)}
        assert {"Approve (a)", "Reject (r)", "Edit (e)"} <= set(commands)
        assert "Stop (esc)" not in commands and "Undo (u)" not in commands
        commands["Approve (a)"]()
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "p.txt").exists()
        assert "Undo (u)" in {c.title for c in app.get_system_commands(app.screen)}


async def test_help_and_palette_follow_the_live_keymap_and_name_the_binding_ids(git_repo: Path):
    session = make_session(git_repo, [("Write.", Bash("echo p > p.txt")), ("More.", Bash("ls"))])
    async with running_app(session, git_repo, keymap={"navtui.approve": "y"}) as (app, pilot, watch):
        commands = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert "Approve (y)" in commands and "navtui.approve" in commands["Approve (y)"]
        await pilot.press("question_mark")
        await watch.until(lambda: isinstance(app.screen, HelpScreen), "help")
        await pilot.pause()
        lines = str(app.screen.query_one("#help-table").render()).splitlines()
        approve = next(line for line in lines if "navtui.approve" in line)
        assert approve.split()[0] == "y"
        for binding_id in ("navtui.quit_app", "navtui.theme", "navtui.interrupt", "navtui.quit",
                           "navtui.help"):
            assert any(binding_id in line for line in lines), binding_id
        assert {"^q", "^c", "^p", "T", "?"} <= {line.split()[0] for line in lines}
        await pilot.press("escape")
        await pilot.press("y")  # the remapped key approves
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "p.txt").exists()


def test_edit_text_round_trips_in_every_dialect():
    from agent_core.formats import parse
    from app.screens.edit import edit_text

    for dialect in ("toolcall", "xml", "text"):
        action = FIX if dialect != "text" else Bash("pytest -q")
        text = edit_text(action, dialect)
        assert parse(text, dialect).action == action
    assert "\n  \"arguments\"" in edit_text(FIX, "toolcall")


async def test_keys_can_be_remapped_by_binding_id_and_the_theme_toggles(git_repo: Path):
    session = make_session(git_repo, [("Write.", Bash("echo k > k.txt")), ("More.", Bash("ls"))])
    app, watch = NavApp(session, repo=git_repo), Watch()
    app.set_keymap({"navtui.approve": "y"})
    async with app.run_test(size=SIZE, message_hook=watch) as pilot:
        await watch.until(lambda: waiting_on(app, 1), "proposal 1")
        await pilot.press("a")
        assert main_screen(app).pending is not None and session.pending is not None
        await pilot.press("y")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        assert (git_repo / "k.txt").exists()
        assert app.theme == "navtui-dark"
        await pilot.press("T")
        assert app.theme == "navtui-light" and not app.current_theme.dark


async def test_format_errors_are_shown_and_a_limit_ends_with_exit_code_2(git_repo: Path):
    session = make_session(git_repo, ["I think the bug is in ops.py.", ("Look.", Bash("ls")),
                                      ("More.", Bash("pwd"))], max_steps=1)
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: waiting_on(app, 1), "proposal 1 after a format error")
        notes = [str(n.render()) for n in main_screen(app).query(".note.-warning")]
        assert len(notes) == 1 and "could not be parsed" in notes[0]
        await pilot.press("a")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen (limit)")
        assert "stopped (limit)" in str(app.screen.query_one("#finish-title").render())
        assert "changed no file" in str(app.screen.query_one("#finish-empty").render())
        assert not app.screen.query("#finish-diff, #branch, #patch, #discard, Input")
        assert not app.screen.check_action("choose", ("branch",))
        await pilot.press("q")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 2
    assert app.result_message.startswith("navtui: the session changed no file.\n")
    assert f"navtui --resume {session.id} {git_repo}" in app.result_message


def test_external_editor_round_trip(monkeypatch):
    from app.screens.edit import edit_in_external_editor

    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "sed -i s/wrong/right/")
    assert edit_in_external_editor("echo wrong > out.txt\n") == "echo right > out.txt\n"


async def test_the_demo_listens_to_reject_undo_stop_and_messages(tmp_path: Path):
    from app.demo import demo_session, make_demo_repo
    from app.screens.reject import RejectScreen as Reject

    repo = make_demo_repo(tmp_path / "stats")
    session = demo_session(repo, delay=0.0)

    def proposed() -> object:
        return session.pending.step.action

    async with running_app(session, repo, resumable=False) as (app, pilot, watch):
        assert "demo" in session.pending.step.thought and "not a real model" in session.pending.step.thought
        assert main_screen(app).query_one("#status").model == "demo (scripted)"
        await pilot.press("r")
        await watch.until(lambda: showing(app, Reject), "reject dialog")
        await pilot.press(*"just read the test", "enter")
        await watch.until(lambda: waiting_on(app, 2), "the demo's alternative")
        assert proposed() == StrReplaceEditor(command="view", path="tests/test_core.py")
        assert "just read the test" in session.pending.step.thought
        for index in (2, 3):
            await watch.until(lambda: waiting_on(app, index), f"proposal {index}")
            await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 4), "the fix")
        fix = proposed()
        assert isinstance(fix, StrReplaceEditor) and fix.command == "str_replace"
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 5), "the check after the fix")
        assert "(len(values) + 1)" not in (repo / "stats/core.py").read_text()
        await pilot.press("u")
        await watch.until(lambda: waiting_on(app, 4), "the fix again: undo moved the script back")
        assert proposed() == fix and "(len(values) + 1)" in (repo / "stats/core.py").read_text()
        await pilot.press("m")
        await watch.until(lambda: showing(app, MessageScreen), "message dialog")
        await pilot.press(*"keep it small", "enter")
        await pilot.press("a")
        await watch.until(lambda: waiting_on(app, 5), "the check, again")
        assert "keep it small" in session.pending.step.thought
        await pilot.press("q")
        await watch.until(lambda: showing(app, QuitScreen), "quit dialog")
        assert "--resume" not in app.screen.explanation and "temporary" in app.screen.explanation
        await pilot.press("n")
        await pilot.press("t")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 0


async def test_the_demo_writes_a_stopped_turn_again_after_g(tmp_path: Path):
    from app.demo import demo_session, make_demo_repo

    repo = make_demo_repo(tmp_path / "stats")
    session = demo_session(repo, delay=0.005, chunk_size=2)
    async with running_app(session, repo, resumable=False, wait_for=None) as (app, pilot, watch):
        main = main_screen(app)
        await watch.until(lambda: main.generating and main.query_one("#thoughts").text, "streaming")
        await pilot.press("escape")
        await watch.until(lambda: main.paused, "stopped")
        await pilot.press("g")
        await watch.until(lambda: waiting_on(app, 1), "proposal 1 after going on")
        assert session.pending.step.action == Bash("ls -R stats tests && python3 -m unittest -q")


async def test_ctrl_c_over_a_dialog_still_stops_the_command(git_repo: Path):
    session = make_session(git_repo, [("Wait.", Bash("sleep 30")), ("More.", Bash("ls"))])
    async with running_app(session, git_repo) as (app, pilot, watch):
        await pilot.press("a")
        await watch.until(lambda: app.main.running, "the command runs")
        await pilot.press("question_mark")
        await watch.until(lambda: showing(app, HelpScreen), "help")
        await pilot.press("ctrl+c")
        await watch.until(lambda: not app.main.running, "the command was stopped")
        assert "interrupted" in (session.records[-1].observation.error or "")
        await pilot.press("escape")
        await watch.until(lambda: waiting_on(app, 2), "proposal 2")
        await pilot.press("m")
        await watch.until(lambda: showing(app, MessageScreen), "message dialog")
        await pilot.press("ctrl+c", "ctrl+c")  # in a text field ctrl+c copies: no quit dialog
        await pilot.pause()
        assert showing(app, MessageScreen)


async def test_a_session_that_crashed_says_why_and_quitting_exits_1_with_the_way_back(git_repo: Path):
    session = make_session(git_repo, [("Look.", Bash("ls"))])

    def broken(prompt):
        raise RuntimeError("the backend broke")

    session.backend.stream = broken
    async with running_app(session, git_repo, wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: app.main is not None and app.main.crashed, "the crash")
        assert "the backend broke" in str(app.main.query_one("#card-command").render())
        await pilot.press("q")
        await watch.until(lambda: showing(app, QuitScreen), "quit dialog")
        await pilot.press("y")
        await watch.until(lambda: app.return_code is not None, "exit")
    assert app.return_code == 1
    assert "RuntimeError: the backend broke" in app.result_message
    assert f"navtui --resume {session.id} {git_repo}" in app.result_message
