"""Which files in a git dir are git's control files, as opposed to its data.

Data is what git records: objects, refs, logs, the index, HEAD, packed-refs and the transient
`*_HEAD` and lock files. Everything else that git reads is control, because it decides what git
runs or where it looks: `config`, `config.worktree`, `commondir`, `info/*` (but `info/refs`,
which `git gc` writes for dumb HTTP), `hooks/*` (but the `.sample`s), `objects/info/alternates`, and the same inside each linked worktree's dir
(`worktrees/*/`, with its `gitdir`) and each submodule's git dir (`modules/*/`, nested ones
too), and the hooks directory `core.hooksPath` names when it is inside the git dir.

Listings are cached per directory by (inode, mtime), so a checkpoint that finds nothing new
costs a `stat` per directory.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_core.git.process import deadline

# Files directly in a git dir that are control.
_TOP = ("config", "config.worktree", "commondir", "objects/info/alternates")
_WORKTREE_TOP = (*_TOP, "gitdir")
# Data that lives in `info/`: what `git update-server-info` (run by `git gc`) writes.
_INFO_DATA = ("refs",)
_MAX_DEPTH = 6  # submodules inside submodules, and names with slashes (`modules/a/b`)
_MAX_ENTRIES = 500  # a directory with more is listed up to this many


class ControlPaths:
    """The control files of the git dir `common` (and of `git_dir`, a linked worktree's)."""

    def __init__(self, common: Path, git_dir: Path) -> None:
        self._common = common
        self._git_dir = git_dir
        self._listings: dict[Path, tuple[tuple[int, int], list[os.DirEntry[str]]]] = {}
        self.hooks_dir: Path | None = None  # core.hooksPath, when it is inside the git dir
        # The last answer, and the stamps of every directory it listed (or found missing).
        self._answer: tuple[tuple[object, ...], list[Path]] | None = None
        self._looked: dict[str, None] = {}  # directories listed, in order

    def files(self) -> list[Path]:
        """Every control file there is now (paths that may be missing are included)."""
        if self._answer is not None and self._answer[0] == self._stamps():
            return self._answer[1]
        self._looked = {}
        found = self._collect()
        self._answer = (self._stamps(), found)
        return found

    def _stamps(self) -> tuple[object, ...]:
        """The stamps of the directories the last answer came from, and where hooks are."""
        return (self.hooks_dir, *((path, _dir_stamp(path)) for path in self._looked))

    def _collect(self) -> list[Path]:
        found = [*(self._common / name for name in _TOP), *self._contents(self._common)]
        if self._git_dir != self._common:
            found.append(self._git_dir / "config.worktree")
        for entry in self._entries(self._common / "worktrees"):
            if entry.is_dir(follow_symlinks=False):
                found += [Path(entry.path) / name for name in _WORKTREE_TOP]
                found += self._contents(Path(entry.path))
        found += self._modules(self._common / "modules", 0)
        if self.hooks_dir is not None:
            found += [Path(e.path) for e in self._entries(self.hooks_dir) if _is_hook(e)]
        return list(dict.fromkeys(found))

    def _contents(self, git_dir: Path) -> list[Path]:
        """`info/*` and `hooks/*` (no `.sample`) of one git dir."""
        info = [Path(e.path) for e in self._entries(git_dir / "info")
                if _is_file(e) and e.name not in _INFO_DATA]
        hooks = [Path(e.path) for e in self._entries(git_dir / "hooks") if _is_hook(e)]
        return info + hooks

    def _modules(self, directory: Path, depth: int) -> list[Path]:
        """The control files of every submodule git dir under `directory` (`.git/modules`)."""
        if depth > _MAX_DEPTH:
            return []
        found: list[Path] = []
        for entry in self._entries(directory):
            if not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if os.path.lexists(path / "HEAD") or os.path.lexists(path / "config"):
                found += [path / name for name in _TOP] + self._contents(path)
                found += self._modules(path / "modules", depth + 1)
            else:
                found += self._modules(path, depth + 1)  # a name with a slash
        return found

    def _entries(self, directory: Path) -> list[os.DirEntry[str]]:
        self._looked[str(directory)] = None
        try:
            st = os.lstat(directory)
        except OSError:
            self._listings.pop(directory, None)
            return []
        if not os.path.isdir(directory) or os.path.islink(directory):
            return []
        stamp = (st.st_ino, st.st_mtime_ns)
        cached = self._listings.get(directory)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)[:_MAX_ENTRIES]
        except OSError:
            entries = []
        self._listings[directory] = (stamp, entries)
        return entries


def _dir_stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_mode


def _is_file(entry: os.DirEntry[str]) -> bool:
    return entry.is_symlink() or entry.is_file(follow_symlinks=False)


def _is_hook(entry: os.DirEntry[str]) -> bool:
    return _is_file(entry) and not entry.name.endswith(".sample")


def configured_hooks_dir(root: Path, env: dict[str, str]) -> Path | None:
    """The directory `core.hooksPath` names (relative to the working tree, as git takes it),
    or None when it is not set. Read with a plain `git config`, which runs nothing."""
    result = deadline.run(
        ["git", "-c", "core.fsmonitor=false", "config", "--get", "core.hooksPath"],
        cwd=root, env=env, stderr=subprocess.DEVNULL,
    )
    value = result.stdout.decode("utf-8", "surrogateescape").strip()
    if result.returncode or not value:
        return None
    path = Path(os.path.expanduser(value))
    return Path(os.path.normpath(path if path.is_absolute() else root / path))
