"""The patch is the session's work, wherever it is produced: the user's own edits (kept as a
checkpoint of their own while a proposal waited) and stray Python bytecode are left out and
named; binary files are shown by name and size."""

from __future__ import annotations

import argparse
import dataclasses
import io
from pathlib import Path

from rich.console import Console

from agent_core.actions import Bash, Submit
from agent_core.events import Notice, SessionFinished, StepProposed
from agent_core.exports import export
from agent_core.policy import AskPolicy
from agent_core.steps import Approve, Decision
from agent_core.trajectory import TrajectoryWriter, default_path, read_trajectory, repo_state_dir
from app.compose import subscribe_patch_out
from app.headless import Transcript
from tests.fixtures.repos import git
from tests.fixtures.tui import make_session

# (py_compile writes the bytecode an import would, whatever PYTHONDONTWRITEBYTECODE says)
FIX = Bash("sed -i 's/len(values) + 1/len(values)/' calc/ops.py && "
           "python3 -c 'import py_compile; py_compile.compile(\"calc/ops.py\")'")
TURNS = [("Fix it.", FIX), ("Some data.", Bash("printf 'a\\0b\\1' > data.bin")), ("Done.", Submit())]


def without_ignore_rules(repo: Path) -> Path:
    git(repo, "rm", "-q", ".gitignore")
    git(repo, "commit", "-qm", "no ignore rules")
    return repo


def run_with_a_user_edit(repo: Path, tmp_path: Path, **config) -> tuple:
    session = make_session(repo, TURNS)
    session.config = dataclasses.replace(session.config, **config)
    events: list = []
    session.subscribe(events.append)
    log = default_path(repo_state_dir(repo), session.id)
    session.subscribe(TrajectoryWriter(log))
    transcript = io.StringIO()
    session.subscribe(Transcript(Console(file=transcript, width=120, color_system=None)))
    patch_out = tmp_path / "out.patch"
    subscribe_patch_out(argparse.Namespace(patch_out=str(patch_out)), session)

    def ask(proposal: StepProposed) -> Decision:
        if proposal.index == 2:  # the user edits a file of their own while step 2 waits
            (repo / "b.txt").write_text("mine\n")
        return Approve()

    finished = session.run(AskPolicy(ask))
    full = session.full_patch()
    session.close()
    return finished, full, patch_out.read_text(), events, log, transcript.getvalue()


def test_user_edits_and_bytecode_are_left_out_of_every_patch_and_named(git_repo: Path, tmp_path: Path):
    finished, full, written, events, log, transcript = run_with_a_user_edit(
        without_ignore_rules(git_repo), tmp_path)
    assert isinstance(finished, SessionFinished) and finished.reason == "submitted"
    assert list((git_repo / "calc/__pycache__").glob("*.pyc"))  # the model's python run wrote it
    assert (git_repo / "b.txt").read_text() == "mine\n"  # still in the working tree
    trajectory = read_trajectory(log)
    exported = export(trajectory, "swebench", git_repo)[0]["model_patch"]
    from_checkpoints = export(dataclasses.replace(trajectory, events=[
        e for e in trajectory.events if not isinstance(e, SessionFinished)]), "swebench", git_repo)
    for patch in (finished.patch, full, written, exported, from_checkpoints[0]["model_patch"]):
        assert "a/calc/ops.py" in patch and "a/data.bin" in patch
        assert "b.txt" not in patch and "__pycache__" not in patch and ".pyc" not in patch
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert "your edits: b.txt — in the working tree, not in the patch" in notices
    assert any("1 Python bytecode file(s)" in n and "keep_pycache" in n for n in notices)
    # The headless transcript names the binary file with its size, never its encoded bytes.
    assert "Binary file: 4 bytes" in transcript and "GIT binary patch" not in transcript


def test_keep_pycache_keeps_the_bytecode(git_repo: Path, tmp_path: Path):
    finished, full, *_ = run_with_a_user_edit(without_ignore_rules(git_repo), tmp_path,
                                              keep_pycache=True)
    assert "__pycache__" in finished.patch and "__pycache__" in full
    assert "b.txt" not in finished.patch


def test_an_ignore_rule_means_no_notice(git_repo: Path, tmp_path: Path):
    assert "__pycache__/" in (git_repo / ".gitignore").read_text()
    finished, _, _, events, *_ = run_with_a_user_edit(git_repo, tmp_path)
    assert "__pycache__" not in finished.patch
    assert not any("bytecode" in e.message for e in events if isinstance(e, Notice))


async def test_the_finish_screen_names_your_edits_left_out_of_the_patch(git_repo: Path):
    from app.screens.finish import FinishScreen
    from tests.fixtures.running_app import running_app
    from tests.fixtures.tui import showing

    session = make_session(git_repo, [("Note.", Bash("echo n > n.txt")), ("Done.", Submit())])
    async with running_app(session, git_repo, size=(120, 40), wait_for=None) as (app, pilot, watch):
        await watch.until(lambda: app.main is not None and app.main.pending is not None, "proposal 1")
        (git_repo / "b.txt").write_text("mine\n")
        await pilot.press("a")
        await watch.until(lambda: app.main.pending is not None and app.main.pending.index == 3, "submit")
        await pilot.press("a")
        await watch.until(lambda: showing(app, FinishScreen), "finish screen")
        assert "b.txt" not in app.screen.patch and "n.txt" in app.screen.patch
        message = str(app.screen.query_one("#finish-message").render())
        assert "your edits: b.txt — in the working tree, not in the patch" in message
        await pilot.press("k")
        await watch.until(lambda: app.return_code is not None, "exit")


def test_batch_predictions_leave_stray_bytecode_out(git_repo: Path, tmp_path: Path):
    import json

    from agent_core.backends.replay import ReplayBackend
    from agent_core.batch import Batch, BatchOptions, load_instances
    from agent_core.session import SessionConfig
    from tests.test_session import write_script

    without_ignore_rules(git_repo)
    base = git(git_repo, "rev-parse", "HEAD").strip()
    instances = tmp_path / "instances.jsonl"
    instances.write_text(json.dumps({"instance_id": "calc-1", "repo": str(git_repo),
                                     "base_commit": base, "problem_statement": "fix average"}) + "\n")
    script = write_script(tmp_path / "calc-1.jsonl", [
        "Thought: fix\nAction: bash sed -i 's/len(values) + 1/len(values)/' calc/ops.py && "
        "python3 -c 'import py_compile; py_compile.compile(\"calc/ops.py\")'",
        "Thought: done\nAction: submit",
    ])
    config = SessionConfig(dialect="text", command_timeout=60.0, backend_info={"backend": "replay"})
    options = BatchOptions(output_dir=tmp_path / "out", config=config,
                           make_backend=lambda instance: ReplayBackend(script))
    [result] = Batch(options).run(load_instances(instances))
    assert result.status == "submitted", result.message
    [prediction] = [json.loads(line) for line in (tmp_path / "out/predictions.jsonl").open()]
    assert "a/calc/ops.py" in prediction["model_patch"]
    assert "__pycache__" not in prediction["model_patch"]
