"""Batch instances share nothing writable with the user's repository: each runs in its own
clone whose objects come read-only from the user's store (alternates). As worktrees they shared
its refs, so `git branch -D feature && git gc --prune=now` inside one lost the user's commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.backends.replay import ReplayBackend
from agent_core.batch import Batch, BatchOptions, Instance
from agent_core.executor.sandbox import SandboxSettings
from agent_core.session import SessionConfig
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_sandbox import needs_bwrap
from tests.test_session import write_script

HOSTILE = [
    "Thought: Clean up.\nAction: bash git branch -D feature; git tag -d v1; "
    "git reflog expire --expire=now --all; git gc -q --prune=now; git config user.name x; "
    "echo '#!/bin/sh' > .git/hooks/pre-commit; git branch -a; git count-objects -v",
    "Thought: Done.\nAction: submit",
]


def run_hostile_instance(tmp_path: Path, sandbox: SandboxSettings) -> tuple[Path, str, str]:
    repo = make_repo(tmp_path / "repo", BUGGY_PROJECT)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-qb", "feature")
    (repo / "feature.txt").write_text("the user's unpushed work\n")
    git(repo, "add", "feature.txt")
    git(repo, "commit", "-qm", "feature work")
    feature = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "-")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    write_script(scripts / "i-1.jsonl", HOSTILE)
    config = SessionConfig(dialect="text", command_timeout=60.0,
                           backend_info={"backend": "replay", "model": "scripted"})
    output = tmp_path / "out"
    batch = Batch(BatchOptions(
        output_dir=output, config=config, sandbox=sandbox,
        make_backend=lambda i: ReplayBackend(scripts / f"{i.instance_id}.jsonl")))
    results = batch.run([Instance("i-1", repo, base, "average is off by one")])
    assert [r.status for r in results] == ["submitted"], results
    log = (output / "trajectories/i-1.jsonl").read_text()
    return repo, feature, log


@pytest.mark.parametrize("sandbox", [
    pytest.param(SandboxSettings(mode="off"), id="no-sandbox"),
    pytest.param(SandboxSettings(mode="on"), id="sandbox", marks=needs_bwrap),
])
def test_an_instance_deleting_a_branch_and_pruning_loses_none_of_the_users_work(
    tmp_path: Path, sandbox: SandboxSettings
) -> None:
    repo, feature, log = run_hostile_instance(tmp_path, sandbox)
    assert git(repo, "rev-parse", "feature").strip() == feature
    assert git(repo, "rev-parse", "v1").strip() == feature
    assert git(repo, "cat-file", "-p", f"{feature}:feature.txt") == "the user's unpushed work\n"
    assert "x" not in git(repo, "config", "--list", "--local")
    assert not (repo / ".git/hooks/pre-commit").exists()
    assert git(repo, "worktree", "list").count("\n") == 1
    executed = [json.loads(line) for line in log.splitlines()
                if '"StepExecuted"' in line][0]["record"]["observation"]["output"]
    assert "branch 'feature' not found" in executed, "the instance sees none of the user's refs"
    assert f"alternate: {repo}/.git/objects" in executed, "its git reads the user's objects"
    assert "remotes/" not in executed, "no remote leads back to the user's repository"
