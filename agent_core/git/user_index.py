"""The user's own index (`.git/index`): a commit of what they staged at a session's start, and
putting it back on undo."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from agent_core.git.commits import commit_tree
from agent_core.git.errors import WorkspaceError
from agent_core.git.head import HeadState
from agent_core.git.runner import GitRunner

__all__ = ["clear_user_marks", "copy_user_index", "restore_user_index", "staged_commit"]


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
    temporary = _copy_beside(user_index, user_index, "index.navtui-whole-")
    try:
        git.run_full("-c", "core.splitIndex=false", "update-index", "--no-split-index",
                     env={"GIT_INDEX_FILE": str(temporary)})
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
        temporary.with_name(temporary.name + ".lock").unlink(missing_ok=True)


def clear_user_marks(git: GitRunner, index: Path) -> None:
    """Clear, in navtui's copy `index` of the user's index, the marks that make git skip a file:
    assume-unchanged everywhere, skip-worktree where the file is in the working tree (a sparse
    checkout marks the paths it leaves out, which must stay out). The user keeps local edits
    in such files; unmarked, they are in checkpoint 0 and every later edit is seen. The user's
    own index keeps its marks (undo to step 0 puts its copy back)."""
    assumed: list[bytes] = []
    skipped: list[bytes] = []
    for entry in git.run("ls-files", "-v", "-z", index=index).split(b"\0"):
        tag, path = entry[:1], entry[2:]
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s") and os.path.lexists(git.root / os.fsdecode(path)):
            skipped.append(path)
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:  # (one mark per call: git applies only one of them)
            git.run("update-index", "-z", flag, "--stdin", index=index,
                    stdin=b"".join(path + b"\0" for path in paths))


def _copy_beside(path: Path, source: Path, prefix: str) -> Path:
    """A copy of `source` in a new file beside `path` (with `path`'s permissions, to be renamed
    over it), of a name no one can guess. The model can write into .git: a link planted at a
    fixed name there would have had navtui write through it, wherever it pointed."""
    handle, name = tempfile.mkstemp(prefix=prefix, dir=path.parent)
    try:
        os.chmod(name, (path if path.exists() else source).stat().st_mode & 0o7777)
        with os.fdopen(handle, "wb") as copy, source.open("rb") as original:
            shutil.copyfileobj(original, copy)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


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
        os.replace(_copy_beside(user_index, saved, "index.navtui-restore-"), user_index)
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
