"""Runs actions on the user's repository: bash in one persistent shell, file tools, search.

`prepare` shows what an action will do (the command that really runs, the diff an edit will
make) without doing it; `execute` does it and returns an Observation. Model mistakes (bad
paths, escapes, bad ranges, timeouts) come back as observations with `error` set, never raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from agent_core.actions import Action, Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.executor.files import FileTools, ToolError, require_encodable
from agent_core.executor.paths import Confinement, PathError, PathMap
from agent_core.executor.plan import READ_ONLY_NOTE, refusal
from agent_core.executor.sandbox import MOUNT_POINT, Launcher, Plain
from agent_core.executor.search import search
from agent_core.executor.shell import Shell
from agent_core.steps import Observation

__all__ = ["Executor", "PathMap", "Prepared", "Shell"]

# What git says when it cannot write into a read-only git dir (index, refs, objects, config).
_READ_ONLY_GIT = re.compile(r"Read-only file system|insufficient permission for adding an object")
_READ_ONLY_FS = "Read-only file system"
_GIT_COMMAND = re.compile(r"(?:^|[\s;&|(`])git(?:\s|$)")
READ_ONLY_GIT_NOTE = (
    "navtui: the git directories are read-only in this sandbox (this machine cannot give the "
    "model's git a copy-on-write view), so git commands that write (add, commit, stash, "
    "checkout, config) fail here; read with git, change files directly: navtui checkpoints "
    "every step."
)


@dataclass
class Prepared:
    """An action ready for approval: as it will run, as shown, and the diff it will make."""

    action: Action
    command_shown: str
    preview_diff: str | None = None


class Executor:
    """One session's executor over the repository at `root`.

    `path_map` says how the model's paths (`/testbed/...`) meet real ones; by default the
    repository is not mounted at the alias, so commands are rewritten and outputs mapped back.
    `launcher` starts the shell (agent_core/executor/sandbox.py); a sandboxed one mounts the
    repository at /testbed, so the map defaults to `PathMap(root, "/testbed", mounted=True)`.
    File tools answer with the model's paths either way. The shell keeps up to four times
    `output_limit` bytes (head and tail), so a clipped observation still has `output_limit`
    characters of head to show.
    """

    def __init__(
        self,
        root: Path,
        *,
        command_timeout: float = 120.0,
        path_alias: str = "/testbed",
        output_limit: int = 16_000,
        path_map: PathMap | None = None,
        launcher: Launcher | None = None,
    ) -> None:
        self.launcher = launcher or Plain(Path(root))
        if path_map is None and self.launcher.sandboxed:
            path_map = PathMap(root, str(MOUNT_POINT), mounted=True)
        self.path_map = path_map or PathMap(root, path_alias)
        self.paths = Confinement(root, self.path_map.alias)
        self.root = self.paths.root
        self.command_timeout = command_timeout
        self.output_limit = output_limit
        self.files = FileTools(self.paths, char_limit=output_limit, names=self.path_map.model_path)
        self._shell: Shell | None = None

    @property
    def plan(self) -> bool:
        """Plan mode (agent_core/executor/plan.py): the model's actions change no file."""
        return self.launcher.repo_read_only

    def set_plan(self, on: bool) -> bool:
        """Switch plan mode; a running sandboxed shell starts again with the repository mounted
        read-only (or read-write), in the same directory. True when the mode changed."""
        if on == self.plan:
            return False
        self.launcher.repo_read_only = on
        if self._shell is not None and self.launcher.sandboxed:
            self._shell.restart()
        return True

    @property
    def shell(self) -> Shell:
        """The session's bash, started on first use."""
        if self._shell is None:
            self._shell = Shell(
                self.root, timeout=self.command_timeout, output_limit=4 * self.output_limit,
                launcher=self.launcher,
            )
        return self._shell

    @property
    def where(self) -> str:
        """Where bash commands run, for the user: "in sandbox: /testbed = REPO, network off", or
        "" without a sandbox."""
        return self.launcher.describe()

    def prepare(self, action: Action) -> Prepared:
        """Rewrite the path alias in bash commands and describe/preview the action."""
        if isinstance(action, Bash):
            command = self.path_map.command_to_real(action.command)
            return Prepared(replace(action, command=command), command)
        if isinstance(action, Edit):
            shown = f"edit {self._name(action.path)} lines {action.start}-{action.end}"
            return Prepared(action, shown, self.files.preview(action))
        if isinstance(action, StrReplaceEditor):
            shown = f"str_replace_editor {action.command} {self._name(action.path)}"
            if action.command == "view":
                if action.view_range:
                    shown += f" {action.view_range}"
                return Prepared(action, shown)
            return Prepared(action, shown, self.files.preview(action))
        if isinstance(action, Read):
            return Prepared(action, f"read {self._name(action.path)}")
        if isinstance(action, Search):
            where = self._name(action.path) if action.path else "."
            return Prepared(action, f"grep -rn {action.pattern!r} {where}")
        return Prepared(action, "submit")

    def execute(self, action: Action) -> Observation:
        """Run `action`; never raises for the model's mistakes. In plan mode a file tool's write
        (and, without a sandbox, a command that is not read-only) is refused, not run."""
        refused = refusal(action, self.launcher.sandboxed) if self.plan else None
        if refused is not None:
            return Observation(output="", error=refused)
        if isinstance(action, Bash):
            try:
                require_encodable(action.command, "The command")
            except ToolError as error:
                return Observation(output="", error=str(error))
            command = self.path_map.command_to_real(action.command)
            return self._noted(command, self.shell.run(command))
        if isinstance(action, Read):
            return self.files.read(action.path)
        if isinstance(action, Search):
            return search(self.paths, action.pattern, action.path, timeout=self.command_timeout)
        if isinstance(action, (Edit, StrReplaceEditor)):
            return self.files.execute(action)
        if isinstance(action, Submit):
            return Observation(output="Session submitted: the working tree's changes are the result.",
                               exit_code=0)
        return Observation(output="", error=f"unknown action {action!r}")

    def run_user_command(self, command: str) -> Observation:
        """A command the user typed, run as is in the same shell as the model's."""
        return self._noted(command, self.shell.run(command))

    def cover_git_entries(self, made: list[str]) -> bool:
        """After a step that made `.git` entries (`made`, relative paths): start the sandboxed
        shell again if its mounts do not cover them, so they are read-only or the model's own
        view from the next command on (the cwd and exported variables come back; background
        processes do not). True when it was started again."""
        if not made or self._shell is None or not self.launcher.uncovered():
            return False
        self._shell.restart()
        return True

    def _noted(self, command: str, observation: Observation) -> Observation:
        """`observation`, with a note saying why when a write failed on a read-only mount: the
        repository in plan mode, or a git dir this machine could not give an overlay."""
        if self.plan and _READ_ONLY_FS in observation.output:
            note = READ_ONLY_NOTE
        elif (self.launcher.git_read_only and _GIT_COMMAND.search(command)
              and _READ_ONLY_GIT.search(observation.output)):
            note = READ_ONLY_GIT_NOTE
        else:
            return observation
        error = f"{observation.error}\n{note}" if observation.error else note
        return replace(observation, error=error)

    def interrupt(self) -> None:
        """Stop the running bash command (from another thread); its observation says so."""
        if self._shell is not None:
            self._shell.interrupt()

    def close(self) -> None:
        """Kill the shell and every process it started; remove the model's git views."""
        if self._shell is not None:
            self._shell.close()
            self._shell = None
        self.launcher.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _name(self, raw: str) -> str:
        """The repository-relative path the model's `raw` path names (as written if refused)."""
        try:
            return self.paths.display(self.paths.resolve(raw))
        except PathError:
            return raw
