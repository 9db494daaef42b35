"""Run plain `git` subprocesses with an environment that never leaks into the user's own state."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_core.git.errors import WorkspaceError

# Variables that would point git at another repository, index or object store than ours.
_REPO_LOCATION_VARS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX",
)

# Settings that keep our snapshots faithful whatever the user's config says.
_CONFIG = (
    "-c", "core.quotePath=false",
    "-c", "core.safecrlf=false",
    "-c", "core.autocrlf=false",
    "-c", "advice.addEmbeddedRepo=false",
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "navtui", "GIT_AUTHOR_EMAIL": "navtui@localhost",
    "GIT_COMMITTER_NAME": "navtui", "GIT_COMMITTER_EMAIL": "navtui@localhost",
}


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REPO_LOCATION_VARS}
    # Read-only commands must not refresh the user's index behind their back.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.update(IDENTITY)
    return env


class GitRunner:
    """`git` in one repository's working tree; `index` selects a private index file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._env = _base_env()

    def run(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        ok_codes: tuple[int, ...] = (0,),
    ) -> bytes:
        """Run `git args`, return stdout; any exit code outside `ok_codes` raises WorkspaceError."""
        return self.run_full(*args, index=index, stdin=stdin, ok_codes=ok_codes).stdout

    def run_full(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        ok_codes: tuple[int, ...] = (0,),
    ) -> subprocess.CompletedProcess[bytes]:
        """Like `run`, but return the whole result (stderr included)."""
        env = self._env if index is None else {**self._env, "GIT_INDEX_FILE": str(index)}
        result = subprocess.run(
            ["git", *_CONFIG, *args], cwd=self.root, env=env, input=stdin,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        if result.returncode not in ok_codes:
            message = result.stderr.decode("utf-8", "replace").strip()
            raise WorkspaceError(f"`git {args[0]}` failed in {self.root}: {message}")
        return result

    def line(self, *args: str, index: Path | None = None) -> str:
        """Run git and return its first output line, stripped."""
        return self.run(*args, index=index).decode("utf-8", "replace").strip()

    def exit_code(self, *args: str) -> tuple[int, str]:
        """Run git for its exit code (no raising) and stripped stdout."""
        result = subprocess.run(
            ["git", *_CONFIG, *args], cwd=self.root, env=self._env,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        return result.returncode, result.stdout.decode("utf-8", "replace").strip()
