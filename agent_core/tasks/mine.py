"""Executable tasks from a repository's own history, shaped like SWE-bench instances.

Two sources of candidates:
* `commit`: a commit (not a merge) that changes code and tests together. The tests it adds or
  changes are the check (`test_patch`), the rest is the gold `patch`, its parent the base, its
  message the problem statement.
* `session`: a navtui session that ended with a submitted patch the user then committed (a
  later commit on HEAD's line holds the patch). The session's issue is the problem statement,
  its patch (test files left out) the gold patch, and the test files that commit (and those
  before it since the session's base) changed the check.

Each candidate is checked the SWE-bench way (`validate`): the test command runs on the base with
the test patch, then with the gold patch too; `FAIL_TO_PASS` are the tests that fail (or do not
exist) before and pass after, `PASS_TO_PASS` those passing both times. A candidate with no
FAIL_TO_PASS test is dropped, and counted with the reason.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agent_core.batch import BatchError
from agent_core.finish import FinishReason
from agent_core.git import GitRunner, WorkspaceError
from agent_core.tasks.checks import CheckError, CheckRunner
from agent_core.tasks.testcmd import is_test_file, scoped
from agent_core.history import standing_records
from agent_core.trajectory import TrajectoryError, list_sessions, read_trajectory

_DIFF_HEADER = re.compile(r"^diff -{2}git a/(.+?) b/", re.MULTILINE)  # `diff --git a/X b/Y`


@dataclass
class Task:
    """One task: SWE-bench's instance fields, plus the patches that make and check it."""

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    test_cmd: str
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    source: str
    created: str
    patch: str = ""
    test_patch: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Candidate:
    """A possible task before its tests are run."""

    instance_id: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str
    test_files: list[str]
    source: str
    created: str


@dataclass
class Mined:
    """The tasks found and, per reason, how many candidates were dropped."""

    tasks: list[Task] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    candidates: int = 0

    def summary(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "tasks": len(self.tasks),
                "dropped": dict(self.dropped),
                "sources": dict(Counter(task.source for task in self.tasks))}


def split_patch(patch: str) -> tuple[str, str]:
    """(code part, test part) of a unified diff, file by file."""
    starts = [m.start() for m in _DIFF_HEADER.finditer(patch)] + [len(patch)]
    code: list[str] = []
    tests: list[str] = []
    for begin, end in zip(starts, starts[1:]):
        piece = patch[begin:end]
        match = _DIFF_HEADER.match(piece)
        (tests if match and is_test_file(match.group(1)) else code).append(piece)
    return "".join(code), "".join(tests)


class History:
    """Reads candidates from one repository's commits and sessions."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo.resolve()
        self.git = GitRunner(self.repo, identity=False)

    def text(self, *args: str) -> str:
        return self.git.run(*args).decode("utf-8", "surrogateescape")

    def diff(self, base: str, commit: str, files: list[str]) -> str:
        return self.text("diff", "--binary", "--full-index", "--no-color", "--no-ext-diff",
                         base, commit, "--", *files)

    def commits(self, limit: int) -> Iterator[Candidate]:
        """Candidates from HEAD's last `limit` commits, newest first."""
        log = self.text("log", "--no-merges", f"-n{limit}", "--format=%H%x00%P%x00%cI%x00%B%x1e",
                        "HEAD")
        for entry in log.split("\x1e"):
            fields = entry.strip("\n").split("\x00")
            if len(fields) != 4 or not fields[1]:
                continue  # a root commit has no base to start from
            commit, parents, created, message = fields
            parent = parents.split()[0]
            files = self.text("diff", "--name-only", "--no-renames", parent, commit, "--").split("\n")
            files = [f for f in files if f]
            tests = [f for f in files if is_test_file(f)]
            code = [f for f in files if not is_test_file(f)]
            if not tests or not code:
                continue
            yield Candidate(
                instance_id=f"{self.repo.name}__commit-{commit[:12]}", base_commit=parent,
                problem_statement=message.strip(), patch=self.diff(parent, commit, code),
                test_patch=self.diff(parent, commit, tests), test_files=tests, source="commit",
                created=created)

    def sessions(self) -> Iterator[Candidate]:
        """Candidates from submitted sessions whose patch a later commit holds."""
        for summary in list_sessions(self.repo):
            try:
                trajectory = read_trajectory(summary.path)
            except TrajectoryError:
                continue
            finished = trajectory.finished
            if finished is None or finished.reason != FinishReason.SUBMITTED or not finished.patch:
                continue
            heads = [r.checkpoint.head for r in standing_records(trajectory.events)
                     if r.checkpoint is not None and r.checkpoint.head]
            patch, _ = split_patch(finished.patch)
            kept = self.kept_in(heads[0], finished.patch) if heads and patch else None
            if kept is None:
                continue
            tests = [f for f in self.text("diff", "--name-only", heads[0], kept, "--").split("\n")
                     if f and is_test_file(f)]
            if not tests:
                continue
            created = summary.started.astimezone(timezone.utc).isoformat() if summary.started \
                else datetime.now(timezone.utc).isoformat()
            yield Candidate(
                instance_id=f"{self.repo.name}__session-{trajectory.session_id}",
                base_commit=heads[0], problem_statement=trajectory.issue, patch=patch,
                test_patch=self.diff(heads[0], kept, tests), test_files=tests, source="session",
                created=created)

    def kept_in(self, base: str, patch: str) -> str | None:
        """The first commit after `base` on HEAD's line whose tree holds `patch`, if any."""
        try:
            line = self.text("rev-list", "--reverse", "--ancestry-path", f"{base}..HEAD").split()
        except WorkspaceError:
            return None
        with tempfile.TemporaryDirectory(prefix="navtui-kept-") as folder:
            index = Path(folder) / "index"
            for commit in line:
                self.git.run("read-tree", commit, index=index)
                check = self.git.run_full("apply", "--cached", "--check", "-R", "-", index=index,
                                          stdin=patch.encode("utf-8", "surrogateescape"),
                                          ok_codes=tuple(range(256)))
                if check.returncode == 0:
                    return commit
        return None


def validate(candidate: Candidate, repo: Path, checks: CheckRunner,
             test_cmd: str | None) -> Task | str:
    """The task `candidate` makes, or why it was dropped."""
    try:
        command = test_cmd or checks.detect(repo, candidate.base_commit,
                                            [candidate.test_patch, candidate.patch])
        if command is None:
            return "no test command detected (pass --test-cmd)"
        command = scoped(command, candidate.test_files) if not test_cmd else command
        before = checks.run(repo, candidate.base_commit, [candidate.test_patch], command,
                            candidate.instance_id)
        after = checks.run(repo, candidate.base_commit, [candidate.test_patch, candidate.patch],
                           command, candidate.instance_id)
    except (CheckError, BatchError):
        return "patch does not apply"
    fail_to_pass = sorted(n for n, ok in after.results.items() if ok and not before.results.get(n))
    if not fail_to_pass:
        return "tests do not flip"
    return Task(
        instance_id=candidate.instance_id, repo=str(repo), base_commit=candidate.base_commit,
        problem_statement=candidate.problem_statement, test_cmd=command,
        FAIL_TO_PASS=fail_to_pass,
        PASS_TO_PASS=sorted(n for n, ok in after.results.items() if ok and before.results.get(n)),
        source=candidate.source, created=candidate.created, patch=candidate.patch,
        test_patch=candidate.test_patch)


def find_tasks(repo: Path, checks: CheckRunner, *, test_cmd: str | None = None,
               limit: int = 200, on_candidate: Callable[[Candidate, Task | str], None] | None = None,
               ) -> Mined:
    """Every task REPO's sessions and last `limit` commits make (see the module docstring)."""
    history = History(repo)
    mined = Mined()
    seen: set[str] = set()
    for candidate in [*history.sessions(), *history.commits(limit)]:
        key = hashlib.sha256(f"{candidate.base_commit}\0{candidate.test_patch}".encode(
            "utf-8", "surrogateescape")).hexdigest()
        if key in seen:
            continue  # a session's fix and the commit that kept it: one task
        seen.add(key)
        mined.candidates += 1
        outcome = validate(candidate, history.repo, checks, test_cmd)
        if isinstance(outcome, Task):
            mined.tasks.append(outcome)
        else:
            mined.dropped[outcome] += 1
        if on_candidate is not None:
            on_candidate(candidate, outcome)
    return mined
