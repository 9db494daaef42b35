"""The issue's loop end to end on the tiny real model: a repository with three fixes with tests
gives three tasks; `finetune --gate` trains v1 on the user's decisions, evaluates it against the
base model on the held-out tasks and promotes it (the tiny model resolves none: a tie); a newer
session trains v2 `--since v1` from `--adapter current`, gated against v1. The verdict's rule
(refuse when worse, or when nothing is held out) on real paired figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.adapters import Registry
from agent_core.backends.identity import read_manifest
from agent_core.evaluation.gate import decide, held_out
from agent_core.evaluation.stats import compare
from agent_core.tasks import Task
from agent_core.trajectory import list_sessions
from tests.fixtures.history import history_repo
from tests.test_cli import navtui
from tests.test_learn import ANSWERS, ISSUE, REPLIES, finetune, summary_of
from tests.test_session import write_script

pytestmark = pytest.mark.slow
GATE = ("--gate", "--gate-eval", "--max-new-tokens 8 --dialect text --max-steps 2")


def decide_once(repo: Path, tmp_path: Path, name: str) -> None:
    script = write_script(tmp_path / f"{name}.jsonl", REPLIES)
    run = navtui("--plain", "--dialect", "text", "--script", str(script), "--issue", ISSUE,
                 str(repo), stdin=ANSWERS)
    assert run.returncode == 3, run.stderr


@pytest.mark.timeout(900)  # two trainings and two gated evaluations of six sessions each
def test_tasks_then_gated_finetunes_promote_with_the_reason(tmp_path: Path, tiny_model_dir: Path):
    repo = history_repo(tmp_path / "calc")
    decide_once(repo, tmp_path, "first")
    decide_once(repo, tmp_path, "held-out")
    trained, held = (s.id for s in list_sessions(repo))
    tasks = tmp_path / "tasks.jsonl"
    assert json.loads(navtui("tasks", str(repo), "-o", str(tasks)).stdout)["tasks"] == 3

    first = summary_of(finetune(repo, tiny_model_dir, tmp_path / "a1", "--method", "sft",
                                "--max-steps", "1", "--sessions", trained,
                                "--gate-tasks", str(tasks), *GATE))
    gate = first["gate"]
    assert (first["version"], gate["decision"], gate["parent"], gate["tasks"]) == (
        "v1", "promote", "base", 3)
    assert gate["reason"].startswith("not worse: v1 resolves 0/3 held-out tasks, base 0/3")
    assert "of your held-out decisions, base in" in gate["reason"]  # the held-out session
    assert Registry(repo).current.name == "v1"
    evaluated = read_manifest(tmp_path / "a1")["eval"]
    assert evaluated["tasks"] == 3 and evaluated["decisions"]["turns"] == 4

    decide_once(repo, tmp_path, "second")
    newest = list_sessions(repo)[-1].id
    second = summary_of(finetune(repo, tiny_model_dir, tmp_path / "a2", "--method", "sft",
                                 "--max-steps", "1", "--adapter", "current", "--since", "v1",
                                 "--gate-tasks", str(tasks), *GATE))
    manifest = read_manifest(tmp_path / "a2")
    assert (manifest["sessions"], manifest["parent"]) == ([newest], str(tmp_path / "a1"))
    assert held not in manifest["sessions"]
    assert (second["gate"]["decision"], second["gate"]["parent"]) == ("promote", "v1")
    assert Registry(repo).current.name == "v2"
    listed = navtui("adapters", str(repo)).stdout
    assert "* v2" in listed and "resolved 0.0%" in listed
    assert navtui("adapters", str(repo), "rollback").stdout.startswith("current: v1")


def test_a_worse_adapter_or_no_held_out_task_is_refused_with_the_reason():
    paired = compare("v1", "v2", {"a": True, "b": True, "c": False},
                     {"a": False, "b": True, "c": False})
    verdict = decide("v2", "v1", paired)
    assert not verdict.promote
    assert verdict.reason.startswith("worse: v2 resolves 1/3 held-out tasks, v1 2/3 "
                                     "(difference -33.3%")
    assert verdict.to_json()["decision"] == "refuse"
    tie = compare("v1", "v2", {"a": True}, {"a": True})
    fewer_matches = decide("v2", "v1", tie, {"match_rate": 0.5}, {"match_rate": 0.25})
    assert not fewer_matches.promote and fewer_matches.reason.startswith(
        "worse on your decisions: v2 resolves 1/1")
    assert "proposes your choice in 25% of your held-out decisions, v1 in 50%" in \
        fewer_matches.reason
    assert decide("v2", "v1", tie, {"match_rate": 0.5}, {"match_rate": 0.5}).promote
    nothing = decide("v2", "v1", None)
    assert not nothing.promote and "no held-out task" in nothing.reason

    def task(instance_id: str, source: str) -> Task:
        return Task(instance_id, "r", "c", "p", "t", ["x"], [], source, "2026-01-01")

    tasks = [task("calc__session-s1", "session"), task("calc__session-s2", "session"),
             task("calc__commit-abc", "commit")]
    assert [t.instance_id for t in held_out(tasks, ["s1"])] == [
        "calc__session-s2", "calc__commit-abc"]
