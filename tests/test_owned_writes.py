"""Issue 34, reproduction 7: navtui's own writes never go through a link the model planted —
the patch (`--patch-out`, and "save the patch" under its default name), the session log and
the sessions index. A planted link is replaced by navtui's file, never followed, so what it
pointed at (here a stand-in for `~/.bashrc`) keeps its bytes."""

from __future__ import annotations

import os
from pathlib import Path

from app.finish import save_patch
from tests.test_cli import ISSUE, navtui
from tests.test_session import FIX_SCRIPTS, write_script

BASHRC = b"# the user's shell setup\nalias ll='ls -l'\n"


def bashrc(tmp_path: Path) -> Path:
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_bytes(BASHRC)
    return path


def test_patch_out_replaces_a_planted_link_and_never_writes_through_it(git_repo: Path,
                                                                       tmp_path: Path):
    target = bashrc(tmp_path)
    patch = git_repo / "fix.patch"
    patch.symlink_to(target)  # planted in the working tree by the model
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    result = navtui("--auto", "--script", str(script), "--issue", ISSUE, "--patch-out",
                    str(patch), str(git_repo))
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == BASHRC
    assert not patch.is_symlink() and patch.read_text().startswith("diff --git")


def test_save_the_patch_under_its_default_name_through_a_link_or_a_hard_link(tmp_path: Path,
                                                                             monkeypatch):
    target = bashrc(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    Path("navtui-s1.patch").symlink_to(target)
    os.link(target, "navtui-s2.patch")
    for name in ("navtui-s1.patch", "navtui-s2.patch"):
        saved = save_patch("diff --git a/x b/x\n", name)
        assert saved == work / name and saved.read_text() == "diff --git a/x b/x\n"
    assert target.read_bytes() == BASHRC


def test_the_session_log_and_the_sessions_index_are_never_written_through_a_link(
    git_repo: Path, tmp_path: Path,
):
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    assert navtui("--auto", "--max-steps", "1", "--script", str(script), "--issue", ISSUE,
                  str(git_repo)).returncode == 2  # stopped: resumable
    sessions = git_repo / ".git" / "navtui" / "sessions"
    (log,) = sessions.glob("*.jsonl")
    target = bashrc(tmp_path)
    index = sessions / "index.ndjson"
    index.unlink(missing_ok=True)
    index.symlink_to(target)
    listed = navtui("sessions", str(git_repo))
    assert listed.returncode == 0, listed.stderr
    assert target.read_bytes() == BASHRC
    # The log itself made a link (to a copy of it, so it reads as a log): resume refuses to
    # write through it, or writes a file of its own.
    copy = tmp_path / "home" / "copy.jsonl"
    copy.write_bytes(log.read_bytes())
    before = copy.read_bytes()
    log.unlink()
    log.symlink_to(copy)
    resumed = navtui("--auto", "--resume", log.stem, "--script", str(script), str(git_repo))
    assert copy.read_bytes() == before
    assert "never through a link" in resumed.stderr and "Traceback" not in resumed.stderr


def test_navtuis_state_under_git_is_never_written_through_a_planted_link(git_repo: Path,
                                                                         tmp_path: Path):
    """With `--sandbox off` the model can plant links in .git/navtui: the raw view's config,
    the store's tips, the lock's temporary file; navtui replaces each, never follows it."""
    from agent_core.workspace import Workspace

    target = bashrc(tmp_path)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    ws.close()
    state = git_repo / ".git" / "navtui"
    planted = [state / "raw-git" / "config", state / "store" / "tips" / "s.json",
               state / f"lock.{os.getpid()}.tmp"]
    for path in planted:
        path.unlink(missing_ok=True)
        path.symlink_to(target)
    ws = Workspace.open(git_repo)
    ws.attach("s")
    ws.checkpoint(1)
    ws.close()
    assert target.read_bytes() == BASHRC
