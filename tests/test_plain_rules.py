"""`--plain` decides approvals as the app does: the config file's `[rules]` pass what they
cover without asking (one policy, `agent_core.policy.Approvals`, for every front end)."""

from __future__ import annotations

import os

from tests.test_cli import ISSUE, navtui
from tests.test_session import write_script

CONFIG = '[rules]\nallow_kinds = ["read"]\nallow_prefixes = ["ls"]\n'


def test_plain_approves_what_the_config_rules_allow_and_asks_for_the_rest(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [
        "Thought: look\nAction: bash ls calc",          # a prefix rule: no question
        "Thought: read\nAction: read calc/ops.py",     # a kind rule: no question
        "Thought: mark\nAction: bash touch asked.txt",  # asked: answered "a"
        "Thought: look again\nAction: bash ls && touch sneaky.txt",  # not widened: asked, "r"
        "Thought: done\nAction: submit",               # asked: answered "a"
    ])
    config = tmp_path / "navtui-config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    env = {**os.environ, "NAVTUI_CONFIG": str(config)}
    result = navtui("--plain", "--script", str(script), "--issue", ISSUE, str(git_repo),
                    stdin="a\nr\nno chaining\na\n", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "step 1 approved without asking: an always-allow rule" in out
    assert "step 2 approved without asking: an always-allow rule" in out
    assert "step 3 approved without asking" not in out
    assert (git_repo / "asked.txt").exists() and not (git_repo / "sneaky.txt").exists()
    assert "rejected: no chaining" in out and "finished: submitted" in out
    assert out.count("[a]pprove") == 3  # the three questions, and only those


def test_plain_without_rules_asks_for_everything(git_repo, tmp_path):
    script = write_script(tmp_path / "s.jsonl", ["Thought: look\nAction: bash ls calc"])
    result = navtui("--plain", "--script", str(script), "--issue", ISSUE, str(git_repo), stdin="q\n")
    assert result.returncode == 3
    assert "approved without asking" not in result.stdout and "[a]pprove" in result.stdout
