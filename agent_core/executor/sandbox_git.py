"""The repository's git directory inside the sandbox: data writable, control read-only.

Git's data (objects, refs, logs, index, HEAD, packed-refs, `*_HEAD` and lock files) stays
writable so everyday git works. What makes git run code or read another configuration, and
navtui's own state, is bound read-only over itself wherever it exists (`CONTROL`): the config,
hooks, `info/`, `commondir`, `config.worktree`, `objects/info/alternates` and `.git/navtui`
(private git dirs, checkpoint indexes, session logs, lock) — in the git dir, in each linked
worktree's (`worktrees/NAME/`, also its `gitdir`) and in each submodule's (`modules/…/`,
recursively). `hooks`, `info` and `navtui` (only the first two in a submodule's) are created
first when missing, so they are read-only from the start. Every directory on the way to a
read-only one is a mount of its own, so it cannot be renamed aside and replaced
(`mv .git/modules/sub x` fails with "busy").

Not coverable by binds: a control file that does not exist yet (`commondir`, `config.worktree`,
`objects/info/alternates`, a submodule git dir created later) can be created, because the
directory holding it must stay writable; navtui's own checks after each step see those.
"""

from __future__ import annotations

from pathlib import Path

# Read-only wherever they exist in a git dir.
CONTROL = ("config", "config.worktree", "commondir", "hooks", "info", "navtui",
           "objects/info/alternates")
# Made first when missing in the repository's and linked worktrees' git dirs (hooks and info
# only in submodules'), so a command inside cannot plant them.
MADE = ("hooks", "info", "navtui")
# Linked worktrees' dirs also name their checkout.
WORKTREE_CONTROL = (*CONTROL, "gitdir")
# How deep submodules inside submodules are followed, and how many git dirs at most.
DEPTH_LIMIT = 6
GIT_DIR_LIMIT = 200


def git_mounts(root: Path, mount_point: str) -> list[str]:
    """bwrap arguments for the git dir of the repository at `root` (mounted at `mount_point`).
    In a linked worktree (.git is a file naming a git dir elsewhere) the main repository's git
    dir is bound at its real path, where the worktree's .git file points — only when that
    repository lists this worktree, so a planted .git file cannot expose another directory."""
    dot_git = root / ".git"
    if dot_git.is_symlink():
        return []
    if dot_git.is_dir():
        return guarded_git_dir(dot_git, f"{mount_point}/.git")
    common = worktree_common_dir(dot_git)
    return guarded_git_dir(common, str(common)) if common else []


def guarded_git_dir(git_dir: Path, inside: str) -> list[str]:
    """Bind `git_dir` at `inside` writable, as a mount of its own (so it cannot be moved aside),
    its control files, worktrees' and submodules' read-only (see the module doc)."""
    args = ["--bind", str(git_dir), inside]
    budget = [GIT_DIR_LIMIT]
    _guard(git_dir, inside, CONTROL, args, budget, depth=0)
    return args


def _guard(git_dir: Path, inside: str, control: tuple[str, ...], args: list[str],
           budget: list[int], depth: int, made: tuple[str, ...] = MADE) -> None:
    budget[0] -= 1
    for name in made:
        try:
            (git_dir / name).mkdir(exist_ok=True)
        except OSError:
            pass  # not writable by navtui: not by the sandbox either
    for name in control:
        path = git_dir / name
        if path.exists() and not _link_on_the_way(git_dir, name):  # a link could aim anywhere
            args += ["--ro-bind", str(path), f"{inside}/{name}"]
    worktrees = git_dir / "worktrees"
    if _plain_dir(worktrees):
        args += ["--bind", str(worktrees), f"{inside}/worktrees"]
        for linked in sorted(worktrees.iterdir()):
            if budget[0] > 0 and _plain_dir(linked):
                where = f"{inside}/worktrees/{linked.name}"
                args += ["--bind", str(linked), where]
                _guard(linked, where, WORKTREE_CONTROL, args, budget, depth + 1)
    if depth < DEPTH_LIMIT and _plain_dir(git_dir / "modules"):
        _guard_modules(git_dir / "modules", f"{inside}/modules", args, budget, depth)


def _guard_modules(directory: Path, inside: str, args: list[str], budget: list[int],
                   depth: int) -> None:
    """Each submodule git dir under `directory` (a name may have slashes: `modules/a/b`), and
    every directory on the way, bound at itself so none can be renamed."""
    args += ["--bind", str(directory), inside]
    for child in sorted(directory.iterdir()):
        if budget[0] <= 0 or not _plain_dir(child):
            continue
        where = f"{inside}/{child.name}"
        if (child / "HEAD").is_file():
            args += ["--bind", str(child), where]
            _guard(child, where, CONTROL, args, budget, depth + 1, made=MADE[:2])
        elif depth < DEPTH_LIMIT:
            budget[0] -= 1
            _guard_modules(child, where, args, budget, depth + 1)


def _plain_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _link_on_the_way(git_dir: Path, name: str) -> bool:
    path = git_dir
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def worktree_common_dir(dot_git: Path) -> Path | None:
    """For the `.git` file of a linked worktree (`gitdir: REPO/.git/worktrees/NAME`), the main
    repository's git dir — if REPO's git dir really registers this worktree (its
    `worktrees/NAME/gitdir` names this .git file back); else None."""
    try:
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        linked = (dot_git.parent / text.removeprefix("gitdir:").strip()).resolve()
        back = (linked / "gitdir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    common = linked.parent.parent
    registered = linked.parent.name == "worktrees" and (common / "HEAD").is_file()
    return common if registered and Path(back).resolve() == dot_git.resolve() else None
