"""`navtui eval`'s core: every task run headless per adapter, its tests run, a result per pair.

Each adapter's sessions are a `agent_core.batch.Batch` over the tasks (own clone per task, the
auto policy, the sandbox) in `<output>/runs/<adapter>/`; each finished session's patch is then
checked the SWE-bench way (`agent_core.tasks.CheckRunner`: base commit, the model's patch, the
task's test patch, its test command): resolved when every FAIL_TO_PASS and PASS_TO_PASS test
passes. Results go to `<output>/results.jsonl`, one line per (task, adapter) pair, appended as
they come: a re-run skips the pairs already there (a session that ended but was not yet checked
is checked from its prediction, not run again), so Ctrl-C loses at most the running pairs.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_core.batch import Batch, BatchError, BatchOptions, Instance, InstanceResult, safe_name
from agent_core.finish import FinishReason
from agent_core.sanitize import json_safe
from agent_core.tasks import CheckError, CheckRunner, Task
from agent_core.user_files import read_user_text


class EvalError(Exception):
    """The evaluation cannot start; the message says which input is wrong."""


@dataclass
class PairResult:
    """One adapter on one task."""

    instance_id: str
    adapter: str
    resolved: bool
    status: str  # how the session ended
    failed: list[str] = field(default_factory=list)  # FAIL_TO_PASS / PASS_TO_PASS not passing

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def load_tasks(path: Path) -> list[Task]:
    """The tasks of a `navtui tasks` file (a relative `repo` is relative to the file);
    EvalError names a bad line."""
    tasks = []
    for number, line in enumerate(read_user_text(path, f"tasks file {path}", EvalError)
                                  .splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):  # SWE-bench's files: JSON in a string
                if isinstance(data.get(key), str):
                    data[key] = json.loads(data[key])
            repo = Path(data["repo"]).expanduser()
            data["repo"] = str(repo if repo.is_absolute() else (path.parent / repo).resolve())
            tasks.append(Task(**{k: data[k] for k in Task.__dataclass_fields__ if k in data}))
        except (ValueError, TypeError, KeyError) as error:
            raise EvalError(f"{path}:{number}: not a task of `navtui tasks` ({error})") from None
    if not tasks:
        raise EvalError(f"{path} holds no task: make some with `navtui tasks REPO -o {path}`")
    return tasks


class Results:
    """`results.jsonl`: one line per (task, adapter); appended by worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> dict[tuple[str, str], PairResult]:
        found: dict[tuple[str, str], PairResult] = {}
        if not self.path.exists():
            return found
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                result = PairResult(**json.loads(line))
            except (ValueError, TypeError):
                continue  # a torn last line: that pair runs again
            found[(result.instance_id, result.adapter)] = result
        return found

    def append(self, result: PairResult) -> None:
        line = json_safe(json.dumps(result.to_json(), ensure_ascii=False))
        with self._lock, self.path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())


@dataclass
class Progress:
    """Pairs done of all, and the time left at the pace so far."""

    total: int
    done: int = 0
    ran: int = 0  # pairs finished in this run (the pace counts only these)
    started: float = field(default_factory=time.monotonic)

    def eta(self) -> float | None:
        left = self.total - self.done
        if left == 0:
            return 0.0
        return (time.monotonic() - self.started) / self.ran * left if self.ran else None


def grade(task: Task, patch: str, checks: CheckRunner, name: str) -> list[str]:
    """The FAIL_TO_PASS and PASS_TO_PASS tests that do not pass with `patch` (all of them when
    a patch does not apply)."""
    wanted = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    try:
        run = checks.run(Path(task.repo), task.base_commit, [patch, task.test_patch],
                         task.test_cmd, name)
    except (CheckError, BatchError):
        return wanted
    return [test for test in wanted if not run.results.get(test)]


@dataclass
class Evaluation:
    """Runs `tasks` for each adapter; `batch_for(adapter, folder)` gives that adapter's batch
    options (backend, session config, sandbox)."""

    output_dir: Path
    tasks: list[Task]
    adapters: list[str]
    batch_for: Callable[[str, Path], BatchOptions]
    checks: CheckRunner
    on_result: Callable[[PairResult, Progress], None] | None = None
    on_stopping: Callable[[], None] | None = None  # Ctrl-C: called before sessions wind down

    def __post_init__(self) -> None:
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.results = Results(self.output_dir / "results.jsonl")

    def run(self) -> dict[str, dict[str, bool]]:
        """Every pending pair; then each adapter's resolved map over the tasks (all pairs, the
        ones from earlier runs too). KeyboardInterrupt stops the running batch and propagates."""
        done = self.results.read()
        progress = Progress(len(self.tasks) * len(self.adapters))
        progress.done = sum(1 for t in self.tasks for a in self.adapters if (t.instance_id, a) in done)
        for adapter in self.adapters:
            pending = [t for t in self.tasks if (t.instance_id, adapter) not in done]
            if pending:
                self._run_adapter(adapter, pending, progress)
        final = self.results.read()
        return {a: {t.instance_id: final[(t.instance_id, a)].resolved for t in self.tasks
                    if (t.instance_id, a) in final} for a in self.adapters}

    def _run_adapter(self, adapter: str, tasks: list[Task], progress: Progress) -> None:
        folder = self.output_dir / "runs" / safe_name(adapter)
        by_id = {task.instance_id: task for task in tasks}
        batch = Batch(self.batch_for(adapter, folder))
        predictions = _predictions(batch.predictions.path)

        def finished(result: InstanceResult) -> None:
            task = by_id[result.instance_id]
            if result.status == "skipped":  # ended in an earlier run, not yet checked
                patch = predictions.get(result.instance_id, "")
            elif _has_prediction(result.status):
                patch = result.patch
            else:
                return  # an error or a stop: the pair runs again next time
            failed = grade(task, patch, self.checks, f"check-{safe_name(task.instance_id)}")
            pair = PairResult(task.instance_id, adapter, not failed, result.status, failed)
            self.results.append(pair)
            progress.done += 1
            progress.ran += 1
            if self.on_result is not None:
                self.on_result(pair, progress)

        instances = [Instance(task.instance_id, Path(task.repo), task.base_commit,
                              task.problem_statement) for task in tasks]
        batch.run(instances, on_result=finished, on_stopping=self.on_stopping)


def _has_prediction(status: str) -> bool:
    try:
        return FinishReason(status).has_prediction
    except ValueError:
        return False


def _predictions(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                data = json.loads(line)
                found[data["instance_id"]] = data["model_patch"]
            except (ValueError, KeyError, TypeError):
                continue
    return found
