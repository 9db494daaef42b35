"""Finding the repository navtui works in, and refusing what it cannot safely work in; the
state git leaves while an operation (merge, rebase, ...) waits for the user."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from agent_core.git.process import deadline
from agent_core.git.errors import WorkspaceError
from agent_core.git.process.runner import SAFE_CONFIG, git_env

# Files and directories git leaves behind while an operation waits for the user.
_IN_PROGRESS = {
    "MERGE_HEAD": "a merge is in progress: finish it with `git commit` or undo it with `git merge --abort`",
    "rebase-merge": "a rebase is in progress: finish it with `git rebase --continue` or `git rebase --abort`",
    "rebase-apply": "a rebase or `git am` is in progress: finish it or run `git rebase --abort` / `git am --abort`",
    "CHERRY_PICK_HEAD": "a cherry-pick is in progress: finish it or run `git cherry-pick --abort`",
    "REVERT_HEAD": "a revert is in progress: finish it or run `git revert --abort`",
}
_OPERATION_LEFTOVERS = (*_IN_PROGRESS, "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "sequencer")


def find_repo(path: Path) -> tuple[Path, Path, Path]:
    """Validate `path`; return (working tree root, git dir, common dir) or raise an actionable
    error. One `git rev-parse`, with none of the repository's code able to run."""
    if not path.exists():
        raise WorkspaceError(f"{path} does not exist: pass the path of your repository")
    if not path.is_dir():
        raise WorkspaceError(f"{path} is not a directory: pass the repository's top directory")
    result = deadline.run(
        ["git", *SAFE_CONFIG, "rev-parse", "--is-bare-repository", "--is-inside-git-dir",
         "--absolute-git-dir", "--git-common-dir", "--show-toplevel"],
        cwd=path, env=git_env(identity=False),
    )
    answers = os.fsdecode(result.stdout).splitlines()
    error = os.fsdecode(result.stderr).strip()
    if answers[:1] == ["true"]:
        raise WorkspaceError(
            f"{path} is a bare repository (no working tree): clone it first, "
            f"e.g. `git clone {shlex.quote(str(path))} {shlex.quote(path.name + '-work')}`, and open the clone."
        )
    if answers[1:2] == ["true"]:
        raise WorkspaceError(f"{path} is inside a .git directory: pass the repository's top directory")
    if result.returncode or len(answers) != 5:
        if "not a git repository" in error:
            raise WorkspaceError(
                f"{path} is not a git repository: navtui checkpoints every step with git. "
                f"Run `git init && git add -A && git commit -m initial` in {path} first."
            )
        raise WorkspaceError(f"cannot open the repository at {path}: {error or 'git gave no answer'}")
    git_dir = Path(answers[2]).resolve()
    common_dir = (path / answers[3]).resolve()  # relative to `path` unless absolute
    root = Path(answers[4]).resolve()
    for name, advice in _IN_PROGRESS.items():
        if (git_dir / name).exists():
            raise WorkspaceError(f"{root}: {advice}, then start navtui again.")
    return root, git_dir, common_dir


def clear_operation_state(git_dir: Path) -> None:
    """Forget merges/rebases/cherry-picks the model left half-done (none existed at open)."""
    if not any((git_dir / name).exists() for name in _IN_PROGRESS):
        return
    for name in _OPERATION_LEFTOVERS:
        path = git_dir / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
