"""Batch runs on real repos: own worktrees, 2 workers, predictions that apply, re-runs skip."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest

from agent_core.backends.base import Prompt
from agent_core.backends.replay import ReplayBackend
from agent_core.events import FormatError, UsageReported
from agent_core.batch import (
    Batch,
    BatchError,
    BatchOptions,
    Instance,
    SharedBackend,
    load_instances,
    run_parallel,
)
from agent_core.session import SessionConfig
from agent_core.trajectory import read_trajectory
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_session import FIX_SCRIPTS, FIXED_LINE, repo_tests_pass, write_script

# A second planted bug, added in a later commit of the same repository.
SUB_LINE = "    return a + b"
SUB_FIX = "    return a - b"


def two_bug_repo(root: Path) -> tuple[Path, str, str]:
    """A repo whose first commit has the `average` bug and whose second adds a buggy `sub`."""
    repo = make_repo(root, BUGGY_PROJECT)
    first = git(repo, "rev-parse", "HEAD").strip()
    ops = repo / "calc/ops.py"
    ops.write_text(ops.read_text() + f"\n\ndef sub(a, b):\n{SUB_LINE}\n")
    git(repo, "commit", "-qam", "add sub")
    return repo, first, git(repo, "rev-parse", "HEAD").strip()


def sub_script() -> list[str]:
    return [
        "Thought: Find sub.\nAction: search \"def sub\" calc",
        f"Thought: It adds.\nAction: edit calc/ops.py 11 11\n{SUB_FIX}",
        "Thought: Done.\nAction: submit",
    ]


@pytest.fixture
def setup(tmp_path: Path):
    repo_a, first, second = two_bug_repo(tmp_path / "a")
    repo_b = make_repo(tmp_path / "b", BUGGY_PROJECT)
    base_b = git(repo_b, "rev-parse", "HEAD").strip()
    # The user has uncommitted work in their checkout; batch must never touch it.
    (repo_a / "README.md").write_text("user's own edit\n")
    instances = [
        {"instance_id": "calc__avg-1", "repo": str(repo_a), "base_commit": first,
         "problem_statement": "average([2, 4, 6]) returns 3"},
        {"instance_id": "calc__sub-2", "repo": str(repo_a), "base_commit": second,
         "problem_statement": "sub(5, 3) returns 8"},
        {"instance_id": "other__avg-3", "repo": "b", "base_commit": base_b,
         "problem_statement": "average is off by one"},
    ]
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in instances))
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    write_script(scripts / "calc__avg-1.jsonl", FIX_SCRIPTS["text"])
    write_script(scripts / "calc__sub-2.jsonl", sub_script())
    write_script(scripts / "other__avg-3.jsonl", FIX_SCRIPTS["text"])
    return path, scripts, repo_a, repo_b


def batch(output: Path, scripts: Path, workers: int = 2) -> Batch:
    def backend(instance: Instance):
        return ReplayBackend(scripts / f"{instance.instance_id}.jsonl", delay=0.002)

    config = SessionConfig(dialect="text", command_timeout=60.0,
                           backend_info={"backend": "replay", "model": "scripted"})
    return Batch(BatchOptions(output_dir=output, config=config, make_backend=backend,
                              workers=workers))


def test_batch_of_three_instances_with_two_workers(setup, tmp_path: Path):
    path, scripts, repo_a, repo_b = setup
    heads = {r: git(r, "rev-parse", "HEAD") for r in (repo_a, repo_b)}
    instances = load_instances(path)
    assert instances[2].repo == repo_b.resolve()  # relative to the instances file
    output = tmp_path / "out"

    results = batch(output, scripts).run(instances)

    assert [(r.instance_id, r.status) for r in results] == [
        ("calc__avg-1", "submitted"), ("calc__sub-2", "submitted"), ("other__avg-3", "submitted")
    ]
    lines = (output / "predictions.jsonl").read_text().splitlines()
    predictions = [json.loads(line) for line in lines]
    by_id = {p["instance_id"]: p for p in predictions}
    assert sorted(by_id) == ["calc__avg-1", "calc__sub-2", "other__avg-3"]
    assert all(p["model_name_or_path"] == "scripted" for p in predictions)
    assert f"+{FIXED_LINE}" in by_id["calc__avg-1"]["model_patch"]
    assert f"+{SUB_FIX}" in by_id["calc__sub-2"]["model_patch"]
    assert FIXED_LINE not in by_id["calc__sub-2"]["model_patch"]

    # Each patch applies to a clean checkout of its base commit and fixes its bug.
    for instance in instances:
        check = tmp_path / f"check-{instance.instance_id}"
        git(instance.repo, "worktree", "add", "-q", "--detach", str(check), instance.base_commit)
        patch = tmp_path / f"{instance.instance_id}.patch"
        patch.write_text(by_id[instance.instance_id]["model_patch"])
        git(check, "apply", str(patch))
        if instance.instance_id != "calc__sub-2":
            assert repo_tests_pass(check)
        else:
            assert SUB_FIX in (check / "calc/ops.py").read_text()
        git(instance.repo, "worktree", "remove", "--force", str(check))

    # The users' checkouts are untouched and no batch worktree is left behind.
    assert (repo_a / "README.md").read_text() == "user's own edit\n"
    assert git(repo_a, "status", "--porcelain").strip() == "M README.md"
    assert git(repo_b, "status", "--porcelain") == ""
    assert {r: git(r, "rev-parse", "HEAD") for r in (repo_a, repo_b)} == heads
    assert len(git(repo_a, "worktree", "list").splitlines()) == 1
    assert list((output / "checkouts").iterdir()) == []
    assert git(repo_a, "for-each-ref", "refs/navtui") == ""

    # One trajectory per instance, tagged with its instance id; two ran at the same time.
    spans = []
    for instance in instances:
        log = read_trajectory(output / "trajectories" / f"{instance.instance_id}.jsonl")
        assert log.meta["instance_id"] == instance.instance_id
        assert log.finished.reason == "submitted"
        spans.append((log.times[0], log.times[-1]))
    assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:])


def test_rerun_skips_finished_and_retries_failed_instances(setup, tmp_path: Path):
    path, scripts, repo_a, _ = setup
    (scripts / "calc__sub-2.jsonl").unlink()  # this one fails: no script
    output = tmp_path / "out"
    instances = load_instances(path)

    first = batch(output, scripts).run(instances)
    assert [r.status for r in first] == ["submitted", "error", "submitted"]
    assert "calc__sub-2" in first[1].instance_id and "replay script not found" in first[1].message
    lines = (output / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 2

    write_script(scripts / "calc__sub-2.jsonl", sub_script())
    seen = []
    second = batch(output, scripts, workers=1).run(instances, on_result=seen.append)
    assert [r.status for r in second] == ["skipped", "submitted", "skipped"]
    assert sorted(r.instance_id for r in seen) == sorted(i.instance_id for i in instances)
    after = (output / "predictions.jsonl").read_text().splitlines()
    assert after[:2] == lines and len(after) == 3
    assert json.loads(after[2])["instance_id"] == "calc__sub-2"
    assert len(git(repo_a, "worktree", "list").splitlines()) == 1


def test_a_bad_base_commit_fails_only_its_instance(setup, tmp_path: Path):
    path, scripts, repo_a, _ = setup
    bad = Instance("bad-1", repo_a, "0" * 40, "x")
    [result] = batch(tmp_path / "out", scripts).run([bad])
    assert result.status == "error" and "cannot check out" in result.message


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "not a JSON object"),
        ("[1, 2]", "expected a JSON object"),
        ('{"instance_id": "x", "repo": "r"}', "base_commit, problem_statement"),
    ],
)
def test_instances_file_errors_name_the_line(tmp_path: Path, line: str, message: str):
    path = tmp_path / "instances.jsonl"
    path.write_text('\n' + line + "\n")
    with pytest.raises(BatchError, match=f"instances.jsonl:2: .*{message}"):
        load_instances(path)


def test_duplicate_ids_and_missing_file_are_refused(tmp_path: Path):
    row = {"instance_id": "x", "repo": ".", "base_commit": "abc", "problem_statement": "p"}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(BatchError, match="duplicate instance_id 'x'"):
        load_instances(path)
    with pytest.raises(BatchError, match="cannot read instances file"):
        load_instances(tmp_path / "missing.jsonl")


def test_shared_backend_generates_one_turn_at_a_time_and_keeps_usage_per_thread(tmp_path: Path):
    outputs = ["Thought: a\nAction: bash ls", "Thought: a much longer reply\nAction: bash pwd"]
    inner = ReplayBackend(write_script(tmp_path / "s.jsonl", outputs), delay=0.01)
    shared = SharedBackend(inner)
    spans: dict[str, tuple[float, float]] = {}
    texts: dict[str, str] = {}
    usages: dict[str, object] = {}
    start = threading.Barrier(2)

    def worker(name: str) -> None:
        start.wait()
        began = time.monotonic()
        texts[name] = "".join(shared.stream(Prompt(text="x")))
        spans[name] = (began, time.monotonic())
        usages[name] = shared.last_usage

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("one", "two")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted(texts.values()) == sorted(outputs)
    first, second = sorted(spans.values())
    assert second[1] - first[0] >= sum(len(o) // inner.chunk_size for o in outputs) * 0.01
    longer = max(texts, key=lambda n: len(texts[n]))
    shorter = min(texts, key=lambda n: len(texts[n]))
    assert usages[longer].new_tokens > usages[shorter].new_tokens


def test_two_workers_share_one_real_local_model(setup, tmp_path: Path, tiny_model_dir: Path):
    from agent_core.backends.factory import BackendConfig, create_backend

    path, _, _, _ = setup
    instances = load_instances(path)[:2]
    shared = SharedBackend(create_backend(BackendConfig(model=str(tiny_model_dir))))
    made: list = []

    def backend(instance: Instance):
        made.append(instance.instance_id)
        return shared

    config = SessionConfig(dialect="toolcall", context_window=4096, max_new_tokens=8,
                           max_format_errors=1, command_timeout=60.0)
    output = tmp_path / "out"
    try:
        results = Batch(BatchOptions(output_dir=output, config=config, make_backend=backend,
                                     workers=2)).run(instances)
    finally:
        shared.shutdown()

    # The random model writes nonsense: each session ends on its format error, not a crash.
    assert [r.status for r in results] == ["format_errors", "format_errors"]
    assert sorted(made) == ["calc__avg-1", "calc__sub-2"]
    for instance in instances:
        log = read_trajectory(output / "trajectories" / f"{instance.instance_id}.jsonl")
        [usage] = [e for e in log.events if isinstance(e, UsageReported)]
        [error] = [e for e in log.events if isinstance(e, FormatError)]
        assert 0 < usage.usage.new_tokens <= 8 and error.raw
    assert len((output / "predictions.jsonl").read_text().splitlines()) == 2


def test_stop_quits_running_sessions_and_a_rerun_finishes_them(setup, tmp_path: Path):
    path, scripts, repo_a, _ = setup
    instances = load_instances(path)
    output = tmp_path / "out"
    slow = Batch(BatchOptions(
        output_dir=output,
        config=SessionConfig(dialect="text", command_timeout=60.0),
        make_backend=lambda i: ReplayBackend(scripts / f"{i.instance_id}.jsonl", delay=0.05),
        workers=2,
    ))
    results: list = []
    runner = threading.Thread(target=lambda: results.extend(slow.run(instances)))
    runner.start()
    logs = output / "trajectories"
    deadline = time.monotonic() + 60
    while not (logs.exists() and any("TurnStarted" in p.read_text() for p in logs.iterdir())):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    slow.stop()
    runner.join(timeout=120)

    assert [r.status for r in results] == ["stopped"] * 3
    assert not (output / "predictions.jsonl").exists()
    assert len(git(repo_a, "worktree", "list").splitlines()) == 1
    assert git(repo_a, "for-each-ref", "refs/navtui") == ""

    again = batch(output, scripts).run(instances)
    assert [r.status for r in again] == ["submitted"] * 3


def test_ctrl_c_taken_by_a_worker_thread_still_stops_the_batch():
    """Linux may hand the process's SIGINT to any thread; the batch's main thread must notice
    it while every instance is still busy (a wait without a timeout never woke up)."""
    started, interrupted, release = threading.Barrier(3), threading.Event(), threading.Event()
    workers: list[int] = []
    noticed: list[bool] = []

    def busy(instance: str) -> str:
        workers.append(threading.get_ident())
        started.wait(timeout=30)
        release.wait(timeout=30)
        return instance

    def ctrl_c_to_a_worker() -> None:
        started.wait(timeout=30)
        signal.pthread_kill(workers[0], signal.SIGINT)
        noticed.append(interrupted.wait(timeout=30))  # False: only once the work was over
        release.set()

    helper = threading.Thread(target=ctrl_c_to_a_worker)
    helper.start()
    with pytest.raises(KeyboardInterrupt):
        run_parallel(["a", "b"], busy, workers=2, on_interrupt=interrupted.set)
    helper.join()
    assert noticed == [True]
