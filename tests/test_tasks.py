"""`navtui tasks`: tasks from a real repository's history, each checked by running its real tests
(pytest, unittest, cargo) in the sandbox before and after the gold patch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_core.executor.sandbox import SandboxSettings
from agent_core.tasks import CheckRunner, find_tasks, split_patch
from agent_core.tasks.testcmd import WHOLE, detect, is_test_file, outcomes
from tests.fixtures.history import commit_all, history_repo
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_cli import navtui
from tests.test_session import FIX_SCRIPTS, write_script

FIELDS = ["instance_id", "repo", "base_commit", "problem_statement", "test_cmd", "FAIL_TO_PASS",
          "PASS_TO_PASS", "source", "created", "patch", "test_patch"]


def test_three_fixes_with_tests_become_tasks_and_the_rest_are_counted(tmp_path: Path):
    repo = history_repo(tmp_path / "calc")
    out = tmp_path / "tasks.jsonl"
    run = navtui("tasks", str(repo), "-o", str(out))
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.splitlines()[-1])
    assert summary == {"candidates": 4, "tasks": 3, "dropped": {"tests do not flip": 1},
                       "sources": {"commit": 3}}
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert [list(task) for task in tasks] == [FIELDS] * 3
    by_check = {task["FAIL_TO_PASS"][0].split("::")[1]: task for task in tasks}
    assert sorted(by_check) == ["test_average", "test_clamp", "test_is_even"]
    average = by_check["test_average"]
    assert average["FAIL_TO_PASS"] == ["tests/test_ops.py::test_average"]
    assert average["PASS_TO_PASS"] == ["tests/test_ops.py::test_add"]
    assert average["problem_statement"].startswith("average divides by len + 1\n\nThe mean")
    assert average["base_commit"] == git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert average["repo"] == str(repo.resolve()) and average["source"] == "commit"
    assert "calc/ops.py" in average["patch"] and "tests/" not in average["patch"]
    assert "+def test_average" in average["test_patch"]
    assert average["test_cmd"].endswith("-m pytest -rA -p no:cacheprovider tests/test_ops.py")
    assert "tests/test_ops.py::test_add_zero" in by_check["test_is_even"]["PASS_TO_PASS"]
    assert "dropped  calc__commit-" in run.stderr and ": tests do not flip" in run.stderr


def test_a_session_whose_patch_the_user_committed_with_a_test_is_a_task(tmp_path: Path):
    repo = make_repo(tmp_path / "calc", BUGGY_PROJECT)
    tests = repo / "tests/test_ops.py"
    tests.write_text(tests.read_text().replace("def test_average():\n    assert average([2, 4, 6]) == 4\n", ""))
    base = commit_all(repo, "no test for average yet")
    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS["text"])
    session = navtui("--auto", "--script", str(script), "--dialect", "text", "--issue",
                     "average is off by one", str(repo))
    assert session.returncode == 0, session.stderr
    tests.write_text(tests.read_text() + "\n\ndef test_average():\n    assert average([2, 4, 6]) == 4\n")
    kept = commit_all(repo, "fix average (navtui's patch) and test it")

    found = find_tasks(repo, CheckRunner(tmp_path / "work"))
    assert found.summary()["sources"] == {"session": 1}  # the commit is the same task: once
    task = found.tasks[0]
    assert task.instance_id.startswith("calc__session-") and task.base_commit == base != kept
    assert task.problem_statement == "average is off by one"
    assert task.FAIL_TO_PASS == ["tests/test_ops.py::test_average"]
    assert "+    return sum(values) / len(values)" in task.patch


def test_unittest_runs_when_named_and_a_timeout_fails_every_test(tmp_path: Path):
    repo = make_repo(tmp_path / "u", {
        "mod.py": "def twice(x):\n    return x + x + 1\n",
        "test_mod.py": "import unittest\n\nfrom mod import twice\n\n\nclass T(unittest.TestCase):\n"
                       "    def test_one(self):\n        self.assertEqual(1, 1)\n",
    })
    (repo / "mod.py").write_text("def twice(x):\n    return x + x\n")
    (repo / "test_mod.py").write_text((repo / "test_mod.py").read_text()
                                      + "\n    def test_twice(self):\n        self.assertEqual(twice(2), 4)\n")
    commit_all(repo, "twice added one")
    found = find_tasks(repo, CheckRunner(tmp_path / "w"), test_cmd="python3 -m unittest -v")
    assert [(t.FAIL_TO_PASS, t.PASS_TO_PASS) for t in found.tasks] == [
        (["test_mod.T.test_twice"], ["test_mod.T.test_one"])]
    slow = CheckRunner(tmp_path / "w2", timeout=1.0)
    run = slow.run(repo, git(repo, "rev-parse", "HEAD").strip(), [], "sleep 30")
    assert (run.results, run.code) == ({}, 124)


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_npm_test_is_detected_and_counts_as_one_test(tmp_path: Path):
    repo = make_repo(tmp_path / "js", {
        "package.json": json.dumps({"name": "js", "scripts": {"test": "node test/twice.js"}}),
        "src/twice.js": "module.exports = (x) => x + x + 1;\n",
        "test/one.js": "",
    })
    (repo / "src/twice.js").write_text("module.exports = (x) => x + x;\n")
    (repo / "test/twice.js").write_text(
        "const assert = require('assert');\nassert.strictEqual(require('../src/twice')(2), 4);\n")
    commit_all(repo, "twice added one")
    assert detect(repo) == "npm test"
    found = find_tasks(repo, CheckRunner(tmp_path / "w"))
    assert [(t.test_cmd, t.FAIL_TO_PASS) for t in found.tasks] == [("npm test", [WHOLE])]


def test_test_files_runner_outputs_and_patch_split():
    assert all(map(is_test_file, ["tests/a.py", "pkg/test_b.py", "x_test.go", "a.spec.ts",
                                  "src/__tests__/c.js"]))
    assert not any(map(is_test_file, ["calc/ops.py", "src/main.rs", "testing.md"]))
    go = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\nFAIL\n"
    assert outcomes(go, 1) == {"TestA": True, "TestB": False}
    assert outcomes("> jest\nTests: 2 passed\n", 0) == {WHOLE: True}
    cargo = "running 2 tests\ntest a::one ... ok\ntest two ... FAILED\ntest three ... ignored\n"
    assert outcomes(cargo, 101) == {"a::one": True, "two": False}
    patch = ("diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n"
             "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n"
             "+++ b/tests/test_x.py\n@@ -1 +1 @@\n-a\n+b\n")
    code, tests = split_patch(patch)
    assert code.startswith("diff --git a/src/x.py") and "tests/" not in code
    assert tests.startswith("diff --git a/tests/test_x.py") and code + tests == patch
