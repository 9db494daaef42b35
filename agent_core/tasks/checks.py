"""Run a task's tests: a fresh checkout of the base commit, patches applied, the test command
in the sandbox, each test's outcome read back.

A checkout is `agent_core.batch.Checkouts`' own clone (the user's objects read through
alternates, nothing written back), removed afterwards. The command runs under the launcher
`--sandbox` chooses (bubblewrap with the checkout at /testbed, or plainly), with a time limit;
its outcome per test comes from `testcmd.outcomes`.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agent_core.batch import Checkouts, Instance
from agent_core.executor.sandbox import SandboxSettings, resolve_sandbox
from agent_core.executor.shell import shell_environment
from agent_core.git import GitRunner
from agent_core.tasks.testcmd import outcomes

OUTPUT_TAIL = 4000  # characters of a failed run's output kept for the report


class CheckError(Exception):
    """A patch does not apply or the tests cannot start; the message says which."""


@dataclass
class CheckRun:
    """Each test's outcome, the command's exit code and the tail of its output."""

    results: dict[str, bool]
    code: int
    tail: str


@dataclass
class CheckRunner:
    """Runs test commands in throw-away checkouts under `root`."""

    root: Path
    sandbox: SandboxSettings = SandboxSettings(mode="auto")
    timeout: float = 600.0

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.checkouts = Checkouts(self.root)

    def run(self, repo: Path, base_commit: str, patches: list[str], command: str,
            name: str = "check") -> CheckRun:
        """`command`'s outcome on `base_commit` with `patches` applied in order (CheckError
        when one does not apply)."""
        checkout = self.checkouts.add(Instance(name, repo, base_commit, ""))
        try:
            for number, patch in enumerate(p for p in patches if p.strip()):
                self._apply(checkout, patch, number)
            return self._test(checkout, command)
        finally:
            self.checkouts.remove(checkout)

    def detect(self, repo: Path, base_commit: str, patches: list[str]) -> str | None:
        """The test command detected in `base_commit` with `patches` applied."""
        from agent_core.tasks.testcmd import detect

        checkout = self.checkouts.add(Instance("detect", repo, base_commit, ""))
        try:
            for number, patch in enumerate(p for p in patches if p.strip()):
                self._apply(checkout, patch, number)
            return detect(checkout)
        finally:
            self.checkouts.remove(checkout)

    def _apply(self, checkout: Path, patch: str, number: int) -> None:
        result = GitRunner(checkout).run_full(
            "apply", "--whitespace=nowarn", "-", stdin=patch.encode("utf-8", "surrogateescape"),
            ok_codes=tuple(range(256)))
        if result.returncode != 0:
            said = result.stderr.decode("utf-8", "replace").strip()
            raise CheckError(f"patch {number + 1} does not apply: {said}")

    def _test(self, checkout: Path, command: str) -> CheckRun:
        # Shown read-only: the user's objects (the clone reads them) and navtui's own Python's
        # import path (detected Python tests run with it).
        found = [self.checkouts.objects_of(checkout),
                 *(Path(p) for p in sys.path if p and Path(p).is_absolute())]
        shown = [p for p in found if p is not None and p.is_dir()
                 and checkout not in (p, *p.parents)]
        settings = dataclasses.replace(self.sandbox, expose=(*self.sandbox.expose, *shown))
        launcher, _ = resolve_sandbox(settings, checkout)
        try:
            with tempfile.TemporaryDirectory(prefix="navtui-tests-") as private:
                argv = launcher.argv(["/bin/sh", "-c", command], Path(private))
                try:
                    done = subprocess.run(
                        argv, cwd=launcher.root, env=shell_environment(launcher.environment()),
                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, timeout=self.timeout)
                except subprocess.TimeoutExpired as timed_out:
                    output = (timed_out.stdout or b"").decode("utf-8", "replace")
                    return CheckRun({}, 124, output[-OUTPUT_TAIL:])
        finally:
            launcher.close()
        output = done.stdout.decode("utf-8", "replace")
        return CheckRun(outcomes(output, done.returncode), done.returncode, output[-OUTPUT_TAIL:])
