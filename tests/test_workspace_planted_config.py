"""Issue 34: a config the model writes into the git dir (`--sandbox off`) is read as git reads it
and judged by an allow-list of settings that run nothing; one git cannot read, or one over the
size cap, never stays in place. After each case the user's plain `git status` runs nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_core.git.control_files.config_read import runs_nothing, settings
from agent_core.workspace import Workspace
from tests.test_workspace_support import bash

FSMONITOR = "touch PWNED; false"


def plain_status(repo: Path) -> None:
    subprocess.run(["git", "status", "--short"], cwd=repo, capture_output=True)


@pytest.mark.parametrize("text", [
    f"[core] fsmonitor = \"{FSMONITOR}\"\n",  # section and key on one line
    f"[core]\n\tfsmonitor = \"touch \\\nPWNED; false\"\n",  # a continued value
    f"[CoRe]\n\tFsMonitor = \"{FSMONITOR}\"\n",
    "[sequence]\n\teditor = vi\n[core]\n\tsshcommand = x\n",
    "[submodule \"a\"]\n\tupdate = !touch PWNED\n",  # no key _RUNS names
])
def test_a_planted_config_git_would_run_is_quarantined(git_repo: Path, text: str):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    config = git_repo / ".git" / "config"
    before = config.read_bytes()
    with config.open("a") as handle:
        handle.write(text)
    ws.checkpoint(1)
    assert config.read_bytes() == before, ws.git_warnings()
    assert any("moved to quarantine" in line for line in ws.git_warnings())
    plain_status(git_repo)
    assert not (git_repo / "PWNED").exists()
    ws.close()


def test_a_config_git_cannot_read_runs_nothing_and_is_named(git_repo: Path):
    """git refuses every command in a repository whose config it cannot parse (the user's
    too): navtui's checkpoint stops with git's words, and nothing runs."""
    from agent_core.workspace import WorkspaceError

    ws = Workspace.open(git_repo)
    ws.begin("s")
    with (git_repo / ".git" / "config").open("a") as handle:
        handle.write(f"[core]\n\tfsmon\\\nitor = \"{FSMONITOR}\"\n")
    with pytest.raises(WorkspaceError, match="bad config line"):
        ws.checkpoint(1)
    plain_status(git_repo)
    assert not (git_repo / "PWNED").exists()
    ws.close()


def test_settings_that_run_nothing_stay(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "git config user.name model && git remote add origin https://example.invalid/r"
                   " && git config branch.main.remote origin")
    ws.checkpoint(1)
    assert not any("quarantine" in line for line in ws.git_warnings())
    assert "model" in (git_repo / ".git" / "config").read_text()
    ws.close()


def test_a_config_over_the_cap_is_quarantined_not_left(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    config = git_repo / ".git" / "config"
    before = config.read_bytes()
    padding = "# " + "x" * 100 + "\n"
    config.write_text(before.decode() + padding * 11_000 + f"[core]\n\tfsmonitor = \"{FSMONITOR}\"\n")
    ws.checkpoint(1)
    assert config.read_bytes() == before
    assert any("over 1,000,000 bytes" in line and "quarantine" in line
               for line in ws.git_warnings())
    plain_status(git_repo)
    assert not (git_repo / "PWNED").exists()
    ws.close()


def test_git_lists_the_settings_and_the_allow_list_judges_them():
    assert settings(b"[core] fsmonitor = x\n[user]\n\tname = m\n") == [
        "core.fsmonitor = x", "user.name = m"]
    assert settings(b"[core\n") is None
    assert runs_nothing("remote.my.fork.url") and runs_nothing("core.worktree")
    assert not runs_nothing("core.fsmonitor") and not runs_nothing("remote.o.uploadpack")
