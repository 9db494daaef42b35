"""The user's own index (`.git/index`): a commit of what they staged at a session's start, and
putting it back on undo."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agent_core.git.commits import commit_tree
from agent_core.git.errors import WorkspaceError
from agent_core.git.head import HeadState
from agent_core.git.runner import GitRunner

__all__ = ["copy_user_index", "restore_user_index", "staged_commit"]


def copy_user_index(git: GitRunner, user_index: Path, target: Path) -> None:
    """Copy the user's index to `target` whole. A split index (`core.splitIndex`) keeps most
    entries in a `sharedindex.<id>` file beside it, which a copy elsewhere would not find: it is
    written whole into a temporary file beside the index first (one git process, only then)."""
    try:
        split = any(name.startswith("sharedindex.") for name in os.listdir(user_index.parent))
    except OSError:
        split = False
    if not split:
        shutil.copyfile(user_index, target)
        return
    temporary = user_index.with_name(f"index.navtui-whole-{os.getpid()}")
    try:
        shutil.copyfile(user_index, temporary)
        git.run_full("-c", "core.splitIndex=false", "update-index", "--no-split-index",
                     env={"GIT_INDEX_FILE": str(temporary)})
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
        temporary.with_name(temporary.name + ".lock").unlink(missing_ok=True)


def staged_commit(git: GitRunner, index: Path, head: HeadState) -> str | None:
    """A commit of the user's staged state (their index), or None if it has conflicts."""
    try:
        tree = git.line("write-tree", index=index)
    except WorkspaceError:
        return None
    return commit_tree(git, git.object_directory, tree, [head.commit], "navtui: staged state")


def restore_user_index(
    git: GitRunner, user_index: Path, saved: Path, *, start: HeadState, staged: str | None,
    head: HeadState, head_moved: bool,
) -> None:
    """Put back the user's staged state (the `saved` copy of their index, else the `staged`
    commit) if HEAD is where it was at the session's `start`, else match the new HEAD."""
    if head == start and saved.exists():
        restored = user_index.with_name("index.navtui-restore")
        shutil.copyfile(saved, restored)
        os.replace(restored, user_index)
        git.run("update-index", "-q", "--refresh", ok_codes=(0, 1))
        return
    if head == start and staged:
        tree = staged + "^{tree}"
    elif head_moved:
        tree = (head.commit + "^{tree}") if head.commit else git.empty_tree
    else:
        return
    git.run("read-tree", "--reset", tree)
    git.run("update-index", "-q", "--refresh", ok_codes=(0, 1))
