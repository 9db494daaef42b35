"""`navtui rewind` and `navtui fork` on real repositories and real session logs, made by the
headless path with the replay backend: files and conversation go back to the step (as `w`
does), a fork shares the history up to its step and leaves the original as it was, both print
the command that continues, and `navtui sessions` shows forks under their parent."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from agent_core.events import StepUndone
from agent_core.resume import load_state
from agent_core.trajectory import read_trajectory
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_cli import navtui
from tests.test_session import write_script

WRITES = [f"Thought: step {n}\nAction: bash echo {n} > f{n}.txt" for n in (1, 2, 3, 4)]
SUBMIT = "Thought: done\nAction: submit"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose path needs quoting in a shell."""
    return make_repo(tmp_path / "my repo", BUGGY_PROJECT)


def logged_session(repo: Path, tmp_path: Path) -> tuple[str, Path]:
    """A session that ran three steps headless (f1.txt .. f3.txt), stopped by --max-steps."""
    script = write_script(tmp_path / "s.jsonl", [*WRITES, SUBMIT])
    done = navtui("--auto", "--sandbox", "off", "--max-steps", "3", "--script", str(script),
                  "--issue", "write files", str(repo))
    assert done.returncode == 2, done.stderr
    (log,) = (repo / ".git/navtui/sessions").glob("*.jsonl")
    return log.stem, script


def refs_of(repo: Path, session_id: str) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", f"refs/navtui/{session_id}/")
    return dict(line.split() for line in out.splitlines())


def test_rewind_puts_files_and_conversation_back_and_the_session_goes_on(repo, tmp_path):
    session_id, script = logged_session(repo, tmp_path)
    done = navtui("rewind", session_id, "--to", "1", str(repo))
    assert done.returncode == 0, done.stderr
    assert f"Session {session_id} is back at step 1" in done.stdout
    assert f"Continue it with: navtui --resume {session_id} {shlex.quote(str(repo))}" in done.stdout
    assert (repo / "f1.txt").exists() and not (repo / "f2.txt").exists()
    assert not (repo / "f3.txt").exists()
    log = read_trajectory(repo / f".git/navtui/sessions/{session_id}.jsonl")
    assert isinstance(log.events[-1], StepUndone) and log.events[-1].to_index == 1
    state = load_state(log)
    assert [r.index for r in state.records] == [1]
    assert all(step <= 1 for step, _ in state.turns)
    assert set(refs_of(repo, session_id)) >= {f"refs/navtui/{session_id}/0", f"refs/navtui/{session_id}/1"}
    assert f"refs/navtui/{session_id}/2" not in refs_of(repo, session_id)
    # The command it printed goes on from step 1 (the replay moves past the turns already used).
    again = navtui("--resume", session_id, "--auto", "--sandbox", "off", "--script", str(script),
                   str(repo))
    assert again.returncode == 0, again.stderr
    assert (repo / "f4.txt").read_text() == "4\n" and not (repo / "f2.txt").exists()


def test_rewind_refuses_changes_made_outside_unless_forced(repo, tmp_path):
    session_id, _ = logged_session(repo, tmp_path)
    (repo / "f3.txt").write_text("mine\n")
    refused = navtui("rewind", session_id, "--to", "1", str(repo))
    assert refused.returncode == 1
    assert "f3.txt" in refused.stderr and "--force" in refused.stderr
    assert (repo / "f3.txt").read_text() == "mine\n" and (repo / "f2.txt").exists()
    forced = navtui("rewind", session_id, "--to", "1", "--force", str(repo))
    assert forced.returncode == 0, forced.stderr
    assert not (repo / "f3.txt").exists()
    saved = forced.stdout.split("git restore --source=")[1].split()[0]
    assert git(repo, "show", f"{saved}:f3.txt") == "mine\n"


def test_rewind_names_the_steps_it_can_go_back_to(repo, tmp_path):
    session_id, _ = logged_session(repo, tmp_path)
    done = navtui("rewind", session_id, "--to", "7", str(repo))
    assert done.returncode == 1
    assert "has no step 7 standing; choose one of 0, 1, 2, 3" in done.stderr
    unknown = navtui("rewind", "nosuch", "--to", "1", str(repo))
    assert unknown.returncode == 1 and "no session 'nosuch'" in unknown.stderr


def test_fork_shares_the_history_up_to_its_step_and_leaves_the_original(repo, tmp_path):
    session_id, _ = logged_session(repo, tmp_path)
    original_log = (repo / f".git/navtui/sessions/{session_id}.jsonl").read_bytes()
    original_refs = refs_of(repo, session_id)
    done = navtui("fork", session_id, "--at", "2", str(repo))
    assert done.returncode == 0, done.stderr
    fork_id = done.stdout.split("Session ", 1)[1].split()[0]
    assert fork_id != session_id
    assert (f"Continue it with: navtui --resume {fork_id} --force {shlex.quote(str(repo))}"
            in done.stdout)
    # The original is as it was: its log, its refs, the working tree.
    assert (repo / f".git/navtui/sessions/{session_id}.jsonl").read_bytes() == original_log
    assert refs_of(repo, session_id) == original_refs
    assert (repo / "f3.txt").exists()
    # The fork: the history up to step 2, its own refs at the same commits.
    log = read_trajectory(repo / f".git/navtui/sessions/{fork_id}.jsonl")
    assert log.session_id == fork_id and log.meta == {"forked_from": session_id, "forked_at": 2}
    assert [r.index for r in load_state(log).records] == [1, 2]
    assert refs_of(repo, fork_id) == {
        f"refs/navtui/{fork_id}/{n}": original_refs[f"refs/navtui/{session_id}/{n}"] for n in (0, 1, 2)
    }
    listed = navtui("sessions", str(repo))
    lines = listed.stdout.splitlines()
    parent_at = next(i for i, line in enumerate(lines) if line.startswith(session_id))
    assert lines[parent_at + 1].startswith(f"└ {fork_id} (fork at 2)")
    rows = [json.loads(line) for line in navtui("sessions", "--json", str(repo)).stdout.splitlines()]
    assert {row["id"]: row["parent"] for row in rows} == {session_id: None, fork_id: session_id}
    # The command it printed: the fork goes on from step 2's files, the original's are kept.
    script = write_script(tmp_path / "fork.jsonl", [
        "Thought: used\nAction: bash true", "Thought: used\nAction: bash true",
        "Thought: fork\nAction: bash echo fork > forked.txt", SUBMIT,
    ])
    again = navtui("--resume", fork_id, "--force", "--auto", "--sandbox", "off", "--script",
                   str(script), str(repo))
    assert again.returncode == 0, again.stderr
    assert (repo / "forked.txt").exists() and not (repo / "f3.txt").exists()
    assert (repo / "f1.txt").exists() and (repo / "f2.txt").exists()
    assert git(repo, "show", f"refs/navtui/{session_id}/3:f3.txt") == "3\n"
    assert (repo / f".git/navtui/sessions/{session_id}.jsonl").read_bytes() == original_log


def test_fork_at_the_start_and_at_a_missing_step(repo, tmp_path):
    session_id, _ = logged_session(repo, tmp_path)
    done = navtui("fork", session_id, "--at", "0", str(repo))
    assert done.returncode == 0, done.stderr
    fork_id = done.stdout.split("Session ", 1)[1].split()[0]
    log = read_trajectory(repo / f".git/navtui/sessions/{fork_id}.jsonl")
    assert load_state(log).records == [] and log.started is not None
    assert set(refs_of(repo, fork_id)) == {f"refs/navtui/{fork_id}/0"}
    missing = navtui("fork", session_id, "--at", "9", str(repo))
    assert missing.returncode == 1 and "has no step 9 standing" in missing.stderr


def test_a_submitted_session_rewound_can_be_resumed(repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [*WRITES[:2], SUBMIT])
    done = navtui("--auto", "--sandbox", "off", "--script", str(script), "--issue", "write files",
                  str(repo))
    assert done.returncode == 0, done.stderr
    (log,) = (repo / ".git/navtui/sessions").glob("*.jsonl")
    row = json.loads(navtui("sessions", "--json", str(repo)).stdout)
    assert (row["status"], row["resumable"]) == ("submitted", False)
    rewound = navtui("rewind", "last", "--to", "1", str(repo))
    assert rewound.returncode == 0, rewound.stderr
    assert not (repo / "f2.txt").exists()
    row = json.loads(navtui("sessions", "--json", str(repo)).stdout)
    assert (row["id"], row["steps"], row["resumable"]) == (log.stem, 1, True)


def test_the_printed_command_continues_the_fork_in_the_app(repo, tmp_path, tmux_pane):
    session_id, _ = logged_session(repo, tmp_path)
    done = navtui("fork", session_id, "--at", "2", str(repo))
    command = shlex.split(done.stdout.split("Continue it with: ", 1)[1].strip())
    assert command[0] == "navtui"
    tmux_pane.start_navtui(*command[1:], cwd=tmp_path)
    tmux_pane.wait_for("Resumed. Earlier steps")
    tmux_pane.wait_for("echo 3 > f3.txt")  # the logged replay goes on at its third turn
    shown = tmux_pane.screen()
    assert "1. bash echo 1 > f1.txt" in shown and "2. bash echo 2 > f2.txt" in shown
    assert "3. bash" not in shown
    assert not (repo / "f3.txt").exists() and (repo / "f2.txt").exists()
    tmux_pane.send("a")
    tmux_pane.wait_for("echo 4 > f4.txt")
    assert (repo / "f3.txt").read_text() == "3\n"
