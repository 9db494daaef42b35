"""The product itself needs no git identity: a session checkpoints and commits with none set.

tests/conftest.py gives every test a fixed identity (so fixtures can commit); this test takes it
away again, as on a machine where `git commit` would stop with "Please tell me who you are".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.git import commit_patch_to_branch
from tests.fixtures.repos import git
from tests.test_session import FIX_SCRIPTS, FIXED_LINE, write_script

NAVTUI = str(Path(sys.executable).parent / "navtui")
IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def test_a_session_and_its_commit_need_no_identity(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    no_identity = tmp_path / "gitconfig"
    no_identity.write_text("[user]\n\tuseConfigOnly = true\n")  # no guessing from the host name
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(no_identity))
    for name in IDENTITY:
        monkeypatch.delenv(name, raising=False)
    plain_commit = subprocess.run(["git", "commit", "--allow-empty", "-qm", "x"], cwd=git_repo,
                                  capture_output=True, text=True)
    assert plain_commit.returncode != 0  # really no identity here

    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    patch = tmp_path / "fix.patch"
    run = subprocess.run([NAVTUI, "--auto", "--script", str(script), "--issue", "fix average",
                          "--patch-out", str(patch), str(git_repo)],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    commit = commit_patch_to_branch(git_repo, patch.read_text(), "navtui/fix", "navtui: fix")
    assert FIXED_LINE in git(git_repo, "show", f"{commit}:calc/ops.py")
