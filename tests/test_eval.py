"""`navtui eval`: adapters run on tasks mined from a real repository, graded by the tasks' real
tests; the paired statistics; re-runs skip finished pairs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_core.evaluation.stats import bootstrap_interval, compare, mcnemar_exact
from agent_core.tasks import CheckRunner, find_tasks
from tests.fixtures.history import history_repo
from tests.test_cli import navtui
from tests.test_session import FIX_SCRIPTS, write_script

CLAMP_FIX = ("Thought: clamp forgets high.\nAction: bash sed -i "
             "'s/return max(low, value)/return min(high, max(low, value))/' calc/ops.py")
GIVE_UP = ["Thought: Looks fine to me.\nAction: submit"]


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """The history repo, its tasks file, and each task's id by the test it checks."""
    root = tmp_path_factory.mktemp("eval")
    repo = history_repo(root / "calc")
    found = find_tasks(repo, CheckRunner(root / "work"))
    tasks = root / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t.to_json()) + "\n" for t in found.tasks))
    by_test = {t.FAIL_TO_PASS[0].split("::")[1]: t.instance_id for t in found.tasks}
    return repo, tasks, by_test


def scripts(root: Path, by_test: dict[str, str]) -> Path:
    """`good` fixes average and clamp (not is_even); `lazy` submits at once everywhere."""
    folder = root / "scripts"
    for name in ("good", "lazy"):
        (folder / name).mkdir(parents=True)
    plays = {"test_average": FIX_SCRIPTS["text"], "test_clamp": [CLAMP_FIX, *GIVE_UP],
             "test_is_even": GIVE_UP}
    for test, instance_id in by_test.items():
        write_script(folder / "good" / f"{instance_id}.jsonl", plays[test])
        write_script(folder / "lazy" / f"{instance_id}.jsonl", GIVE_UP)
    return folder


def test_two_adapters_are_run_graded_and_paired_and_a_rerun_skips_them(tmp_path: Path, mined):
    repo, tasks, by_test = mined
    folder = scripts(tmp_path, by_test)
    out = tmp_path / "out"
    flags = ["eval", str(repo), "--tasks", str(tasks), "--adapter", "lazy", "--adapter", "good",
             "--script-dir", str(folder), "--dialect", "text", "--output", str(out), "--json"]
    run = navtui(*flags)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    summary = lines[-1]
    assert summary["adapters"] == {"lazy": {"resolved": 0, "tasks": 3, "rate": 0.0},
                                   "good": {"resolved": 2, "tasks": 3, "rate": 0.6667}}
    [paired] = summary["paired"]
    assert (paired["a"], paired["b"], paired["both"], paired["only_a"]) == ("lazy", "good", 0, [])
    assert sorted(paired["only_b"]) == sorted([by_test["test_average"], by_test["test_clamp"]])
    assert paired["difference"] == pytest.approx(2 / 3) and paired["p_value"] == 0.5
    assert paired["ci_low"] <= 2 / 3 <= paired["ci_high"]
    events = [e for e in lines[:-1] if e["event"] == "result"]
    assert [e["done"] for e in events] == [1, 2, 3, 4, 5, 6] and events[-1]["eta_s"] == 0
    assert {(e["adapter"], e["instance_id"]) for e in events} == {
        (a, t) for a in ("lazy", "good") for t in by_test.values()}
    unresolved = next(e for e in events if e["adapter"] == "good"
                      and e["instance_id"] == by_test["test_is_even"])
    assert unresolved["failed"] == ["tests/test_ops.py::test_is_even"]
    assert "good vs lazy: +66.7% resolved" in run.stderr and "McNemar p=0.5" in run.stderr
    assert "[6/6]" in run.stderr and "ETA 0s" in run.stderr

    again = navtui(*flags)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout.splitlines()[-1]) == summary
    assert "[" not in again.stderr.split("good vs lazy")[0]  # no pair ran again
    assert len((out / "results.jsonl").read_text().splitlines()) == 6


def test_a_server_serving_both_adapters_is_asked_by_name(tmp_path: Path, mined, scripted_http):
    """`--backend openai`: the adapter is the served model's name; vLLM's /v1/models lists the
    base and both LoRAs; each request's `model` picks the adapter's replies."""
    from tests.fixtures.servers import Reply, sse

    repo, tasks, by_test = mined
    statements = {json.loads(line)["instance_id"]: json.loads(line)["problem_statement"]
                  for line in tasks.read_text().splitlines()}
    plays = {"v2": {by_test["test_average"]: FIX_SCRIPTS["text"],
                    by_test["test_clamp"]: [CLAMP_FIX, *GIVE_UP],
                    by_test["test_is_even"]: GIVE_UP}}
    turns: dict[tuple[str, str], int] = {}

    def completion(body: dict) -> Reply:
        task = next(t for t, said in statements.items() if said.splitlines()[0] in body["prompt"])
        replies = plays.get(body["model"], {}).get(task, GIVE_UP)
        turn = turns.get((body["model"], task), 0)
        turns[(body["model"], task)] = turn + 1
        text = replies[min(turn, len(replies) - 1)]
        return Reply(body=sse({"choices": [{"index": 0, "text": text, "finish_reason": "stop"}]},
                              "[DONE]"))

    card = {"object": "model", "owned_by": "vllm", "max_model_len": 16384}
    scripted_http.models = Reply(headers={"Content-Type": "application/json"}, body=[json.dumps(
        {"object": "list", "data": [card | {"id": "Qwen/Qwen3-8B", "parent": None},
                                    card | {"id": "v1", "parent": "Qwen/Qwen3-8B"},
                                    card | {"id": "v2", "parent": "Qwen/Qwen3-8B"}]})])
    scripted_http.pages["/v1/completions"] = completion
    served = tmp_path / "v2-dir"  # v2 is REPO's registered version the server serves as "v2"
    served.mkdir()
    (served / "adapter_config.json").write_text('{"r": 8}')
    (served / "navtui-adapter.json").write_text('{"version": 2}')
    assert navtui("adapters", str(repo), "add", str(served)).stdout == f"v2: {served}\n"
    run = navtui("eval", str(repo), "--tasks", str(tasks), "--backend", "openai", "--base-url",
                 scripted_http.base_url, "--adapter", "v1", "--adapter", "v2", "--dialect", "text",
                 "--output", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.splitlines()[-1])
    assert {a: r["resolved"] for a, r in summary["adapters"].items()} == {"v1": 0, "v2": 2}
    assert {model for model, _ in turns} == {"v1", "v2"}
    assert summary["paired"][0]["p_value"] == 0.5
    manifest = json.loads((served / "navtui-adapter.json").read_text())
    assert (manifest["eval"]["resolved"], manifest["eval"]["tasks"]) == (2, 3)


def test_ctrl_c_stops_cleanly_and_the_rerun_runs_only_the_pairs_left(tmp_path: Path, mined):
    # The good adapter's first command waits on a gate in its checkout, opened only once eval
    # says it is stopping: the lazy adapter's three pairs are done, none of good's.
    repo, tasks, by_test = mined
    folder = scripts(tmp_path, by_test)
    originals = {script: script.read_text() for script in (folder / "good").iterdir()}
    for script, lines in originals.items():
        wait = json.dumps({"output": "Thought: Wait.\nAction: bash while [ ! -e .gate ]; do "
                                     "sleep 0.05; done"})
        script.write_text(wait + "\n" + lines)
    out = tmp_path / "out"
    flags = ["eval", str(repo), "--tasks", str(tasks), "--adapter", "lazy", "--adapter", "good",
             "--script-dir", str(folder), "--dialect", "text", "--output", str(out)]
    process = subprocess.Popen([sys.executable, "-m", "app.cli", *flags], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr: list[str] = []
    reader = threading.Thread(target=lambda: stderr.extend(iter(lambda: process.stderr.read(1), "")))
    reader.start()
    deadline = time.monotonic() + 240
    checkouts = out / "runs/good/checkouts"
    while not checkouts.is_dir() or not list(checkouts.iterdir()):
        assert time.monotonic() < deadline and process.poll() is None, "".join(stderr)
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    while "stopping" not in "".join(stderr):
        assert time.monotonic() < deadline and process.poll() is None, "".join(stderr)
        time.sleep(0.05)
    for checkout in checkouts.iterdir():
        (checkout / ".gate").touch()
    process.wait(timeout=120)
    reader.join(timeout=30)
    assert process.returncode == 3, "".join(stderr)
    assert "re-run the same command to continue" in "".join(stderr)
    done = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {d["adapter"] for d in done} == {"lazy"} and len(done) == 3
    assert list(checkouts.iterdir()) == []

    for script, lines in originals.items():
        script.write_text(lines)
    again = navtui(*flags)
    assert again.returncode == 0, again.stderr
    assert "[4/6] good" in again.stderr and "[1/6]" not in again.stderr
    assert json.loads(again.stdout.splitlines()[-1])["adapters"]["good"]["resolved"] == 2


def test_mcnemar_and_the_bootstrap_on_known_figures():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)
    assert bootstrap_interval([(False, True)] * 4) == (1.0, 1.0)
    low, high = bootstrap_interval([(True, False), (False, True)] * 10)
    assert low < 0 < high
    paired = compare("a", "b", {"x": True, "y": False, "z": True}, {"x": True, "y": True})
    assert (paired.tasks, paired.both, paired.only_a, paired.only_b) == (2, 1, [], ["y"])
    assert paired.difference == 0.5


@pytest.mark.slow
def test_the_tiny_model_is_measured_on_tasks_and_on_held_out_decisions(
    tmp_path: Path, mined, tiny_model_dir: Path, tiny_adapter_dir: Path
):
    from agent_core.trajectory import list_sessions
    from tests.test_learn import ANSWERS, ISSUE, REPLIES

    repo, tasks, by_test = mined
    one = tmp_path / "one.jsonl"
    one.write_text(next(line for line in tasks.read_text().splitlines()
                        if by_test["test_average"] in line) + "\n")
    script = write_script(tmp_path / "decided.jsonl", REPLIES)
    decided = navtui("--plain", "--dialect", "text", "--script", str(script), "--issue", ISSUE,
                     str(repo), stdin=ANSWERS)
    assert decided.returncode == 3, decided.stderr
    session = list_sessions(repo)[-1].id
    run = navtui("eval", str(repo), "--tasks", str(one), "--backend", "hf", "--model",
                 str(tiny_model_dir), "--adapter", "base", "--adapter", str(tiny_adapter_dir),
                 "--dialect", "text", "--max-new-tokens", "8", "--max-steps", "2",
                 "--sessions", session, "--output", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.splitlines()[-1])
    assert summary["adapters"]["base"] == {"resolved": 0, "tasks": 1, "rate": 0.0}
    assert summary["paired"][0]["tasks"] == 1
    base, tuned = summary["decisions"]["base"], summary["decisions"][str(tiny_adapter_dir)]
    for figures in (base, tuned):
        assert figures["turns"] == 4  # approved, rejected, edited, approved
        assert 0 <= figures["match_rate"] <= 1 and 0 <= figures["format_error_rate"] <= 1
        assert figures["rejected_logprob"] < 0 and figures["wanted_logprob"] < 0
    assert base["rejected_logprob"] != tuned["rejected_logprob"]  # the LoRA changes the model


def test_task_files_as_swe_bench_writes_them_and_bad_lines_are_named(tmp_path: Path):
    from agent_core.evaluation import EvalError, load_tasks

    line = {"instance_id": "x", "repo": "calc", "base_commit": "abc", "problem_statement": "p",
            "test_cmd": "pytest", "FAIL_TO_PASS": '["t::a"]', "PASS_TO_PASS": "[]",
            "source": "commit", "created": "2026-01-01"}
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(line) + "\n")
    [task] = load_tasks(path)
    assert (task.FAIL_TO_PASS, task.PASS_TO_PASS, task.repo) == (
        ["t::a"], [], str(tmp_path / "calc"))
    path.write_text(json.dumps(line) + "\n" + json.dumps({"instance_id": "y"}) + "\n")
    with pytest.raises(EvalError, match=r"tasks.jsonl:2: not a task"):
        load_tasks(path)
    path.write_text("\n")
    with pytest.raises(EvalError, match="holds no task"):
        load_tasks(path)
