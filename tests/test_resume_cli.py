"""`kill -9` a real `navtui --auto` mid-step, list it with `navtui sessions`, then `--resume` it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_core.events import Notice, StepExecuted
from agent_core.trajectory import read_trajectory
from tests.fixtures.repos import git
from tests.test_session import FIXED_LINE, PYTEST, repo_tests_pass, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")


def navtui(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVTUI, *args], capture_output=True, text=True, timeout=timeout)


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the session to get there"
        time.sleep(0.05)


def test_kill_9_mid_step_then_resume_finishes_without_losing_a_step(git_repo: Path,
                                                                    tmp_path: Path):
    mark = tmp_path / "step3-started"  # outside the repo: survives the restore
    # ... and across the two runs, which a sandbox's private /tmp would not allow.
    no_sandbox = ("--sandbox", "off")
    outputs = [
        "Thought: Read the module.\nAction: read calc/ops.py",
        f"Thought: The divisor is off by one.\nAction: edit calc/ops.py 7 7\n{FIXED_LINE}",
        # Killed while this runs: the tree is left half-changed. On the re-run it does nothing.
        "Thought: Try something.\nAction: bash "
        f"if [ ! -e {mark} ]; then touch {mark}; echo junk >> calc/ops.py; "
        "echo wip > wip.txt; sleep 5; fi",
        f"Thought: Run the tests.\nAction: bash {PYTEST}",
        "Thought: Done.\nAction: submit",
    ]
    script = write_script(tmp_path / "script.jsonl", outputs)
    first = subprocess.Popen(
        [NAVTUI, "--auto", *no_sandbox, "--script", str(script), "--issue",
         "average is off by one", str(git_repo)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for(lambda: (git_repo / "wip.txt").exists() or first.poll() is not None)
        assert first.poll() is None, first.stderr.read()
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    assert "junk" in (git_repo / "calc/ops.py").read_text()

    listed = navtui("sessions", "--json", str(git_repo))
    assert listed.returncode == 0, listed.stderr
    [session] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (session["status"], session["steps"]) == ("interrupted", 2)
    assert session["issue"] == "average is off by one"

    resumed = navtui("--auto", *no_sandbox, "--force", "--script", str(script), "--resume",
                     session["id"][:15], str(git_repo))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    printed = " ".join(resumed.stdout.split())
    assert "resumed session" in printed and "restored checkpoint 2" in printed
    assert "stopped during step 3" in printed

    text = (git_repo / "calc/ops.py").read_text()
    assert FIXED_LINE in text and "junk" not in text
    assert not (git_repo / "wip.txt").exists()
    assert repo_tests_pass(git_repo)
    log = read_trajectory(Path(session["path"]))
    notices = [e.message for e in log.events if isinstance(e, Notice)]
    assert any("restored checkpoint 2" in n and "calc/ops.py" in n for n in notices)
    executed = [e.record for e in log.events if isinstance(e, StepExecuted)]
    assert [r.index for r in executed] == [1, 2, 3, 4, 5]
    assert executed[0].proposed.raw == outputs[0] and executed[-1].action.kind == "submit"
    assert log.finished.reason == "submitted" and len(log.writer_pids) == 2
    assert git(git_repo, "status", "--porcelain").strip() == "M calc/ops.py"

    again = navtui("sessions", "--json", str(git_repo))
    assert json.loads(again.stdout)["status"] == "submitted"
    assert navtui("--auto", "--script", str(script), "--resume", session["id"],
                  str(git_repo)).returncode == 1


def test_plain_resume_without_backend_flags_uses_the_logged_backend(git_repo: Path,
                                                                    tmp_path: Path):
    from tests.test_session import FIX_SCRIPTS

    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    first = subprocess.run([NAVTUI, "--plain", "--json", "--script", str(script), "--issue",
                            "fix average", str(git_repo)],
                           input="a\na\nq\n", capture_output=True, text=True, timeout=120)
    assert first.returncode == 3, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    patch = tmp_path / "out.patch"
    resumed = subprocess.run([NAVTUI, "--plain", "--resume", session_id, "--patch-out",
                              str(patch), str(git_repo)],
                             input="a\na\na\n", capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert FIXED_LINE in (git_repo / "calc/ops.py").read_text()
    assert f"+{FIXED_LINE}" in patch.read_text()


def test_sessions_suggests_only_a_session_that_can_be_resumed(git_repo: Path, tmp_path: Path):
    from tests.test_session import FIX_SCRIPTS

    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    quit_run = subprocess.run([NAVTUI, "--plain", "--json", "--script", str(script), "--issue",
                               "quit early", str(git_repo)],
                              input="a\nq\n", capture_output=True, text=True, timeout=120)
    assert quit_run.returncode == 3, quit_run.stderr
    quit_id = json.loads(quit_run.stdout.splitlines()[0])["session_id"]
    quit_log = git_repo / ".git/navtui/sessions" / f"{quit_id}.jsonl"

    # Newer sessions that cannot be resumed: one still running (a live process writes it) and
    # one that submitted its fix.
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        running_id = "29990101-000000-aaaaaa"
        lines = quit_log.read_text().replace(quit_id, running_id).splitlines()
        later = [json.dumps({**json.loads(line), "t": json.loads(line)["t"] + 1000})
                 for line in lines]
        later.append(json.dumps({"type": "writer", "pid": holder.pid, "resumed": True,
                                 "t": time.time() + 2000}))
        (quit_log.parent / f"{running_id}.jsonl").write_text("\n".join(later) + "\n")
        time.sleep(1.1)  # the submitted session starts later than the quit one
        done = navtui("--auto", "--script", str(script), "--issue", "fix it", str(git_repo))
        assert done.returncode == 0, done.stderr

        listed = navtui("sessions", "--json", str(git_repo))
        rows = {row["id"]: row for row in map(json.loads, listed.stdout.splitlines())}
        assert {(row["status"], row["resumable"]) for row in rows.values()} == {
            ("quit", True), ("running", False), ("submitted", False)
        }
        table = navtui("sessions", str(git_repo))
        assert table.returncode == 0, table.stderr
        suggestion = table.stdout.strip().splitlines()[-1]
        assert suggestion == f"Resume one with: navtui --resume {quit_id} {git_repo}"

        # The flags agree with what --resume does.
        for session_id, row in rows.items():
            if not row["resumable"]:
                refused = navtui("--auto", "--resume", session_id, str(git_repo))
                assert refused.returncode == 1
                assert ("still running" in refused.stderr
                        or "already submitted" in refused.stderr), refused.stderr
    finally:
        holder.kill()
        holder.wait()
    resumed = navtui(*suggestion.split("navtui ", 1)[1].split(), "--auto")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_sessions_suggests_nothing_when_no_session_can_be_resumed(git_repo: Path,
                                                                  tmp_path: Path):
    from tests.test_session import FIX_SCRIPTS

    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    assert navtui("--auto", "--script", str(script), "--issue", "fix it",
                  str(git_repo)).returncode == 0
    table = navtui("sessions", str(git_repo))
    assert table.returncode == 0 and "submitted" in table.stdout
    assert "--resume" not in table.stdout


def test_a_kept_demo_session_resumes_headless(tmp_path: Path):
    """The demo's scripted model is app's own backend: `--plain --resume` on a kept demo repo
    gets it back."""
    from app.demo import make_demo_repo

    repo = make_demo_repo(tmp_path / "stats")
    started = subprocess.run(  # the first beat is logged, waiting for a decision; then it exits
        [sys.executable, "-c", "import sys; from pathlib import Path; from app.demo import demo_session\n"
         f"session = demo_session(Path({str(repo)!r}), delay=0.0)\n"
         "assert session.propose() is not None\nsession.close()\nprint(session.id)"],
        capture_output=True, text=True, timeout=120, check=True)
    resumed = subprocess.run([NAVTUI, "--plain", "--resume", started.stdout.strip(), str(repo)],
                             input="q\n", capture_output=True, text=True, timeout=120)
    assert "unknown backend" not in resumed.stderr
    assert resumed.returncode == 3, resumed.stdout + resumed.stderr
