"""Run many instances headless, each in its own clone, and write SWE-bench predictions.

Input: JSON Lines, one instance per line with `instance_id`, `repo` (a local path, or an
`owner/name` as SWE-bench publishes it: `batch_repos`), `base_commit` and `problem_statement`
(other fields are ignored). Output folder:

    predictions.jsonl            one SWE-bench prediction per finished instance
    trajectories/<id>.jsonl      each instance's session log (`navtui export` reads these too)
    checkouts/<id>/              the instance's clone while it runs; removed afterwards (the
                                 log keeps the steps and the patch)

The user's repository shares nothing writable with an instance: each gets its own clone
(`Checkouts`: objects read from the user's store through alternates, its own refs, index and
config, no remote), removed on every exit path (Ctrl-C included). Instance
ids name files and folders, so `.`, `..`, path separators, NUL and control characters are
refused, and nothing outside `checkouts/` is ever removed.

An instance counts as finished once its prediction is written (the session ended by submit, a
limit, an exhausted script or format errors); re-running skips finished instances and retries
the rest (those that crashed, errored, were interrupted or met a server that stayed
unavailable). Workers are threads, one Session each: the time goes to the model server and to
bash, not to Python. Every session approves every action (the auto policy) until `Batch.stop()`.
`Batch.progress` counts done/running/failed instances for a live line (`batch_progress`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.backends.base import Backend
from agent_core.batch_progress import BatchProgress
from agent_core.batch_repos import RepoError, RepoFinder, has_commit, is_slug
from agent_core.events import SessionFinished, StepProposed
from agent_core.executor import Executor
from agent_core.executor.sandbox import SandboxSettings, resolve_sandbox
from agent_core.exports import model_name
from agent_core.finish import FinishReason
from agent_core.git import GitRunner, WorkspaceError
from agent_core.prompt_types import Prompt, Usage
from agent_core.sanitize import json_safe
from agent_core.user_files import read_user_text
from agent_core.session import Session, SessionConfig, new_session_id
from agent_core.steps import AUTO, Approve, Decision, Quit
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from agent_core.workspace import Workspace


class BatchError(Exception):
    """The batch cannot start; the message says which input is wrong and how to fix it."""


@dataclass
class Instance:
    instance_id: str
    repo: Path
    base_commit: str
    problem_statement: str
    slug: str | None = None  # `owner/name`: `repo` is found or cloned when the instance runs


REQUIRED_FIELDS = ("instance_id", "repo", "base_commit", "problem_statement")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]")
_BAD_ID_CHARS = re.compile(r"[/\\\x00-\x1f\x7f]")


def id_problem(instance_id: str) -> str | None:
    """Why `instance_id` cannot name an instance's files, or None when it can."""
    if not instance_id.strip():
        return "is empty"
    if instance_id.strip(".") == "":
        return "is only dots (it would name the output folder or its parent)"
    if _BAD_ID_CHARS.search(instance_id):
        return "contains a path separator, NUL or another control character"
    return None


def load_instances(path: Path | str) -> list[Instance]:
    """Parse and check an instances file; relative `repo` paths are relative to the file."""
    path = Path(path)
    lines = read_user_text(path, f"instances file {path}", BatchError).splitlines()
    instances: list[Instance] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BatchError(f"{where}: not a JSON object ({exc})") from exc
        if not isinstance(data, dict):
            raise BatchError(f"{where}: expected a JSON object with {', '.join(REQUIRED_FIELDS)}")
        missing = [k for k in REQUIRED_FIELDS if not isinstance(data.get(k), str) or not data[k]]
        if missing:
            raise BatchError(f"{where}: missing or empty field(s) {', '.join(missing)}")
        problem = id_problem(data["instance_id"])
        if problem:
            raise BatchError(f"{where}: instance_id {data['instance_id']!r} {problem}; use "
                             "letters, digits, '.', '_' and '-'")
        if safe_name(data["instance_id"]) in seen:
            raise BatchError(f"{where}: duplicate instance_id {data['instance_id']!r} (ids must "
                             "differ in letters, digits, '.', '_' or '-')")
        seen.add(safe_name(data["instance_id"]))
        repo = Path(data["repo"]).expanduser()
        repo = repo if repo.is_absolute() else (path.parent / repo).resolve()
        slug = data["repo"] if is_slug(data["repo"]) and not repo.exists() else None
        instances.append(
            Instance(
                instance_id=data["instance_id"],
                repo=repo,
                base_commit=data["base_commit"],
                problem_statement=data["problem_statement"],
                slug=slug,
            )
        )
    return instances


def locate_repo(instance: Instance, finder: RepoFinder) -> Instance:
    """The instance with `repo` a local repository (an `owner/name` found or cloned by
    `finder`); BatchError says what is wrong."""
    if instance.slug is not None:
        try:
            return dataclasses.replace(instance, repo=finder.find(instance.slug), slug=None)
        except (RepoError, WorkspaceError) as error:
            raise BatchError(f"{instance.instance_id}: {error}") from None
    if not instance.repo.is_dir():
        raise BatchError(f"{instance.instance_id}: repo {instance.repo} is not a directory: give "
                         "a local repository's path, or an owner/name such as django/django")
    return instance


def safe_name(instance_id: str) -> str:
    """A file-name- and ref-safe form of an instance id."""
    return _SAFE_ID.sub("_", instance_id)


class Predictions:
    """`predictions.jsonl`: appended by worker threads, read to skip finished instances."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def finished_ids(self) -> set[str]:
        if not self.path.exists():
            return set()
        ids = set()
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                ids.add(json.loads(line)["instance_id"])
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
        return ids

    def append(self, prediction: dict[str, Any]) -> None:
        line = json_safe(json.dumps(prediction, ensure_ascii=False))  # a non-UTF-8 patch too
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


class Checkouts:
    """Creates and removes each instance's own repository under `root`: a new `git init` whose
    `objects/info/alternates` (written by navtui) names the user's object store, with the base
    commit checked out detached. It has no refs, remote, config or hooks of the user's; git
    reads the user's objects and writes only its own, so nothing the instance does (`git branch
    -D`, `git gc --prune=now`, a config or a hook) reaches the user's repository. Checkouts of one
    repository are made one at a time; nothing but a direct child of `root` is ever removed."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()
        self._live: set[Path] = set()  # checkouts until removed

    def _lock(self, repo: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(repo.resolve(), threading.Lock())

    def path_for(self, instance: Instance) -> Path:
        path = (self.root / safe_name(instance.instance_id)).resolve()
        if path.parent != self.root:
            raise BatchError(f"{instance.instance_id!r} does not name a folder inside {self.root}")
        return path

    def add(self, instance: Instance) -> Path:
        path = self.path_for(instance)
        self.remove(path)
        with self._guard:
            self._live.add(path)
        with self._lock(instance.repo):
            try:
                store = _object_store(instance.repo)
                _checked(_git(self.root, "init", "--quiet", "--", str(path)))
                alternates = path / ".git/objects/info/alternates"
                with open(alternates, "x", encoding="utf-8") as file:  # O_EXCL: navtui's own
                    file.write(f"{store}\n")
                _checked(_git(path, "checkout", "--quiet", "--detach", instance.base_commit,
                              "--"))
            except (BatchError, OSError) as error:
                self.remove(path)
                fetch = "" if has_commit(instance.repo, instance.base_commit) else (
                    f" (the commit is not in it: fetch it with `git -C {shlex.quote(str(instance.repo))} "
                    "fetch --all`)")
                raise BatchError(f"{instance.instance_id}: cannot check out "
                                 f"{instance.base_commit} of {instance.repo}: {error}{fetch}"
                                 ) from None
        return path

    def objects_of(self, path: Path) -> Path | None:
        """The user's object store a checkout reads through alternates (the sandbox shows it
        read-only); None when it has none."""
        alternates = path / ".git/objects/info/alternates"
        try:
            lines = alternates.read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        first = Path(lines[0]) if lines else None
        return first if first is not None and first.is_absolute() and first.is_dir() else None

    def remove(self, path: Path) -> None:
        resolved = path.resolve()
        if resolved.parent != self.root or path.is_symlink():
            raise BatchError(f"refusing to remove {path}: not a checkout folder of {self.root}")
        shutil.rmtree(resolved, ignore_errors=True)
        with self._guard:
            self._live.discard(resolved)

    def remove_all(self) -> None:
        """Remove every checkout still there."""
        with self._guard:
            live = list(self._live)
        for path in live:
            self.remove(path)


def _object_store(repo: Path) -> Path:
    """The object directory of the repository at `repo` (its common git dir's `objects`)."""
    result = _checked(_git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    store = Path(result.stdout.strip()) / "objects"
    if not store.is_dir() or store.is_symlink():
        raise BatchError(f"{repo} has no object store of its own ({store})")
    return store


def _checked(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    if result.returncode != 0:
        raise BatchError(result.stderr.strip() or f"git exited with {result.returncode}")
    return result


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git through navtui's runner (none of the repository's hooks or filters run)."""
    result = GitRunner(repo).attempt(*args)
    return subprocess.CompletedProcess(
        result.args, result.returncode,
        result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"),
    )


class SharedBackend(Backend):
    """One loaded model serving every worker: turns are generated one at a time.

    For a local (hf) model, which cannot generate for two sessions at once and is too big to
    load per instance. Sessions' `close()` leaves it loaded; `shutdown()` frees it.
    """

    def __init__(self, inner: Backend):
        self.inner = inner
        self.name = inner.name
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def last_usage(self) -> Usage | None:
        return getattr(self._local, "usage", None)

    @last_usage.setter
    def last_usage(self, usage: Usage | None) -> None:
        self._local.usage = usage

    def stream(self, prompt: Prompt) -> Iterator[str]:
        with self._lock:
            try:
                yield from self.inner.stream(prompt)
            finally:
                self._local.usage = self.inner.last_usage

    def cancel(self) -> None:
        self.inner.cancel()

    def count_tokens(self, prompt: Prompt) -> int:
        return self.inner.count_tokens(prompt)

    def count_added_tokens(self, before: Prompt, after: Prompt) -> int:
        return self.inner.count_added_tokens(before, after)

    def skip(self, turns: int) -> None:
        self.inner.skip(turns)

    def close(self) -> None:
        """Kept loaded for the other instances (see `shutdown`)."""

    def shutdown(self) -> None:
        self.inner.close()


@dataclass
class InstanceResult:
    instance_id: str
    status: str  # a SessionFinished reason, "skipped", or "error"
    message: str = ""
    patch: str = ""
    trajectory: Path | None = None


# The main thread waits for the instances in waits this long at most. Linux may hand a Ctrl-C
# to any of the process's threads; Python then raises KeyboardInterrupt in the main thread only
# once it runs again, which a wait without a timeout on work that never ends did not do.
INTERRUPT_POLL = 0.2


def run_parallel(
    instances: list[Instance],
    run_one: Callable[[Instance], InstanceResult],
    workers: int,
    on_result: Callable[[InstanceResult], None] | None = None,
    on_interrupt: Callable[[], None] | None = None,
) -> list[InstanceResult]:
    """Run `run_one` over `instances` in `workers` threads; results in input order.

    On Ctrl-C, `on_interrupt` is called so running work can wind down before the pool is joined.
    """
    def task(instance: Instance) -> InstanceResult:
        try:
            result = run_one(instance)
        except Exception as exc:  # one broken instance must not stop the others
            said = str(exc) if isinstance(exc, BatchError) else f"{type(exc).__name__}: {exc}"
            result = InstanceResult(instance.instance_id, FinishReason.ERROR, said)
        if on_result is not None:
            on_result(result)
        return result

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="navtui-batch")
    try:
        futures = [pool.submit(task, instance) for instance in instances]
        waiting = set(futures)
        while waiting:  # timed waits: see INTERRUPT_POLL
            waiting = wait(waiting, timeout=INTERRUPT_POLL).not_done
        return [future.result() for future in futures]
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


STOPPED = "stopped"  # status of an instance the batch was stopped before or during


@dataclass
class BatchOptions:
    output_dir: Path
    config: SessionConfig  # copied per instance
    make_backend: Callable[[Instance], Backend]
    workers: int = 1
    secrets: tuple[str, ...] = ()  # literal strings kept out of the logs (API keys)
    sandbox: SandboxSettings = SandboxSettings(mode="off")  # per instance, in its clone
    repos: RepoFinder = field(default_factory=RepoFinder)  # where `owner/name` repos are


class Batch:
    """One batch run over an output folder (see the module docstring for its layout)."""

    def __init__(self, options: BatchOptions):
        self.options = options
        self.output_dir = options.output_dir.expanduser().resolve()
        self.trajectories = self.output_dir / "trajectories"
        self.predictions = Predictions(self.output_dir / "predictions.jsonl")
        self.checkouts = Checkouts(self.output_dir / "checkouts")
        self._stopping = threading.Event()
        self._running: set[Session] = set()
        self._running_lock = threading.Lock()
        self.progress = BatchProgress()

    def decide(self, proposal: StepProposed) -> Decision:
        """The batch's policy: approve everything, until the batch is stopped."""
        return Quit() if self._stopping.is_set() else Approve(AUTO)

    def stop(self) -> None:
        """Stop the batch (thread-safe): generation in progress is cancelled, running sessions
        quit at their next decision, waiting instances are not started. None of them gets a
        prediction, so a re-run picks them up."""
        self._stopping.set()
        with self._running_lock:
            running = list(self._running)
        for session in running:
            session.cancel()

    def run(
        self,
        instances: list[Instance],
        on_result: Callable[[InstanceResult], None] | None = None,
        on_stopping: Callable[[], None] | None = None,
    ) -> list[InstanceResult]:
        """Run every unfinished instance; finished ones come back with status "skipped".

        On Ctrl-C the batch stops (see `stop`) and `on_stopping` is called at once, before the
        running instances have wound down."""
        self.trajectories.mkdir(parents=True, exist_ok=True)
        self.checkouts.root.mkdir(parents=True, exist_ok=True)
        done = self.predictions.finished_ids()
        self.progress.begin(len(instances), self.options.workers)

        reporting = threading.Lock()  # a result and the counts it leaves are reported together

        def counted(result: InstanceResult) -> None:
            with reporting:
                self.progress.finished(result.instance_id, result.status)
                if on_result is not None:
                    on_result(result)

        try:
            return run_parallel(
                instances,
                lambda instance: self._skip(instance) if instance.instance_id in done
                else self.run_one(instance),
                self.options.workers,
                counted,
                on_interrupt=lambda: self._interrupted(on_stopping),
            )
        finally:
            self.checkouts.remove_all()

    def _interrupted(self, on_stopping: Callable[[], None] | None) -> None:
        self.stop()
        if on_stopping is not None:
            on_stopping()

    def _skip(self, instance: Instance) -> InstanceResult:
        return InstanceResult(instance.instance_id, "skipped", "already in predictions.jsonl",
                              trajectory=self._trajectory_path(instance))

    def _trajectory_path(self, instance: Instance) -> Path:
        return self.trajectories / f"{safe_name(instance.instance_id)}.jsonl"

    def run_one(self, instance: Instance) -> InstanceResult:
        """Check out, run with the auto policy, record the prediction, remove the checkout."""
        if self._stopping.is_set():
            return InstanceResult(instance.instance_id, STOPPED, "the batch was stopped")
        path = self._trajectory_path(instance)
        if path.exists():
            path.unlink()  # an earlier attempt that did not finish: start over
        self.progress.started(instance.instance_id)
        instance = locate_repo(instance, self.options.repos)
        checkout = self.checkouts.add(instance)
        try:
            finished = self._session(instance, checkout, path)
        finally:
            self.checkouts.remove(checkout)
        stopped = self._stopping.is_set() and finished.reason == FinishReason.QUIT
        status = STOPPED if stopped else finished.reason
        result = InstanceResult(instance.instance_id, status, finished.message, finished.patch,
                                path)
        if FinishReason(finished.reason).has_prediction:
            self.predictions.append(
                {
                    "instance_id": instance.instance_id,
                    "model_name_or_path": model_name(read_trajectory(path)),
                    "model_patch": finished.patch,
                }
            )
        return result

    def _session(self, instance: Instance, checkout: Path, log: Path) -> SessionFinished:
        config = dataclasses.replace(self.options.config,
                                     backend_info=dict(self.options.config.backend_info))
        writer = TrajectoryWriter(log, secrets=self.options.secrets)
        writer.meta(instance_id=instance.instance_id, repo=str(instance.repo),
                    base_commit=instance.base_commit)
        objects = self.checkouts.objects_of(checkout)
        sandbox = self.options.sandbox
        if objects is not None:  # the clone's git reads the user's objects, read-only
            sandbox = dataclasses.replace(sandbox, expose=(*sandbox.expose, objects))
        launcher, _ = resolve_sandbox(sandbox, checkout)
        session = Session(
            workspace=Workspace.open(checkout),
            executor=Executor(checkout, command_timeout=config.command_timeout,
                              path_alias=config.path_alias, launcher=launcher),
            backend=self.options.make_backend(instance),
            issue=instance.problem_statement,
            config=config,
            session_id=f"{safe_name(instance.instance_id)}-{new_session_id()}",
        )
        session.subscribe(writer)
        with self._running_lock:
            self._running.add(session)
        try:
            return session.run(self)
        finally:
            with self._running_lock:
                self._running.discard(session)
            session.close()
            writer.close()
            session.workspace.delete_session(session.id)
