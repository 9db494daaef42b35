"""The user's git directories inside the sandbox: never writable, wholly.

Covered, at every place inside where they would be writable (under /testbed, or under a
`--writable` directory or the repository's venv, shown at their real paths):

* the repository's git dir however `.git` reaches it — a directory, a symlink, a `gitdir:` file
  (a linked worktree's dir and its common dir, the main repository's `.git`, then shown at its
  real path, only when it registers this worktree: a planted `.git` file shows nothing) — with
  `commondir`, `worktrees/`, `modules/` (submodules' git dirs) and `.git/navtui`, navtui's state;
* every `.git` in the working tree when the shell starts (`GitEntryScan`): a directory as above;
  a file bound read-only over itself, with the git dir it names when that lies in the working
  tree; a link's target when it lies there.

A git directory is an overlay whose upper layer is the model's (git_views.py): its git works in
its own view. Where overlays cannot be mounted, it is bound read-only: its git can read but
not write. A mount cannot be removed or renamed from inside (`rm -rf .git`, `mv n/.git x`
fail "busy"); a `.git` link can be, and what the model puts there is its own `.git` (the
workspace's after-step checks name it). The shell is started again when a step made a new
`.git` (`GitMounts.uncovered`), so that one is covered from the next command on.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from agent_core.executor.git_views import GitViews
from agent_core.git import DOT_GIT, SAFE_CONFIG, GitEntry, GitEntryScan, git_env

# How many git dirs get an overlay of their own; beyond, they are bound read-only.
OVERLAY_LIMIT = 200
# How many `.git` entries in the working tree are covered (in path order; past them, a tree
# of thousands of repositories starts without covering the rest, which the model may write).
NESTED_LIMIT = 1_000
_TIMEOUT = 30.0


class GitMounts:
    """bwrap arguments covering every git directory the model could reach (see the module
    doc). `views`: the overlays' layers (None: bind read-only); `shown`: real directories bound
    writable at their own paths (a `--writable` one, the repository's venv)."""

    def __init__(self, root: Path, mount_point: str, views: GitViews | None,
                 shown: tuple[str, ...] = ()) -> None:
        self.root = root
        self.mount_point = mount_point
        self.views = views
        self.shown = shown
        self._scan = GitEntryScan(root)
        self._found: dict[str, GitEntry] | None = None  # a walk the next start may use
        self._covered: dict[str, GitEntry] = {}  # what the last start covered

    def uncovered(self) -> list[str]:
        """The `.git` entries now that the running shell's mounts do not cover (when there are,
        the walk is kept for the shell about to start)."""
        found = self._scan.scan()
        missing = sorted(path for path, entry in found.items() if self._covered.get(path) != entry)
        self._found = found if missing else None
        return missing

    def args(self) -> list[str]:
        """The mounts for a shell starting now (the working tree walked for `.git` entries)."""
        entries, self._found = self._found or self._scan.scan(), None
        self._covered = entries
        plan = _Plan(self)
        plan.repository(entries.get(DOT_GIT))
        nested = sorted(path for path in entries if path != DOT_GIT)
        for path in nested[:NESTED_LIMIT]:
            plan.nested(self.root / path, entries[path])
        return plan.arguments()


class _Plan:
    """The directories and files to cover, gathered before any argument is written (a mount
    inside another one must come after it)."""

    def __init__(self, mounts: GitMounts) -> None:
        self._mounts = mounts
        self._directories: dict[str, str] = {}  # inside -> real
        self._files: dict[str, str] = {}
        self._own_views: set[str] = set()  # inside paths that get an overlay

    def repository(self, entry: GitEntry | None) -> None:
        """The repository's own git dir and common dir, however `.git` names them."""
        dot_git = self._mounts.root / DOT_GIT
        if entry is None:
            return
        if entry.kind == "file":
            self.file(dot_git)
            self.named_by(dot_git)
            common = worktree_common_dir(dot_git)
            if common is not None:  # shown at its own path, where the `.git` file points
                self._directories.setdefault(str(common), str(common))
                self._own_views.add(str(common))
            return
        for directory in (Path(os.path.realpath(dot_git)), *_git_dirs(self._mounts.root)):
            self.directory(directory)

    def nested(self, path: Path, entry: GitEntry) -> None:
        """A `.git` in the working tree, and the git dir a file or link names."""
        if entry.kind == "dir":
            self.directory(path)
        elif entry.kind == "file":
            self.file(path)
            self.named_by(path)
        elif entry.kind == "link":
            target = Path(os.path.realpath(path))
            if target.is_file():
                self.file(target)
            else:
                self.git_dir(target)

    def named_by(self, dot_git: Path) -> None:
        """The git dir (and common dir) a `.git` file names."""
        self.git_dir(_gitdir_of(dot_git))

    def git_dir(self, target: Path | None) -> None:
        """A git dir a `.git` file or link names, and its `commondir`: only one that looks like
        a git dir (a HEAD file), never the working tree's top or above (a `gitdir: ..` planted to
        turn the whole tree into the model's private view)."""
        if target is None or not (target / "HEAD").is_file():
            return
        if _under(str(self._mounts.root), str(target)):
            return
        self.directory(target)
        common = _common_of(target)
        if common is not None and not _under(str(self._mounts.root), str(common)):
            self.directory(common)

    def directory(self, real: Path | None) -> None:
        if real is None or not real.is_dir():
            return
        for inside in self._places(real):
            self._directories.setdefault(inside, str(real))

    def file(self, real: Path) -> None:
        for inside in self._places(real):
            self._files.setdefault(inside, str(real))

    def _places(self, real: Path) -> list[str]:
        """Where inside `real` is writable: under the mount point (an overlay there), and at
        its own path under a directory shown writable (bound read-only there)."""
        places = []
        root, path = str(self._mounts.root), str(real)
        if _under(path, root):
            inside = self._mounts.mount_point + path[len(root):]
            places.append(inside)
            self._own_views.add(inside)
        if any(_under(path, top) for top in self._mounts.shown):
            places.append(path)
        return places

    def arguments(self) -> list[str]:
        """Overlays (or read-only binds) for the directories, outermost first, none inside
        another; then the files, read-only."""
        views = self._mounts.views
        args: list[str] = []
        done: list[str] = []
        for inside in sorted(self._directories, key=lambda p: (p.count("/"), p)):
            if any(_under(inside, outer) for outer in done):
                continue
            real = self._directories[inside]
            overlays = args.count("--overlay")
            if views is not None and inside in self._own_views and overlays < OVERLAY_LIMIT:
                upper, work = views.layers(Path(real), inside)
                args += ["--overlay-src", real, "--overlay", upper, work, inside]
            else:
                args += ["--ro-bind", real, inside]
            done.append(inside)
        for inside, real in sorted(self._files.items()):
            if not any(_under(inside, outer) for outer in done):
                args += ["--ro-bind", real, inside]
        return args


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _git_dirs(root: Path) -> tuple[Path | None, Path | None]:
    """(git dir, common dir) of the repository at `root`, as git finds them (a `.git` link
    followed, a `commondir` read), with none of the repository's code able to run."""
    try:
        done = subprocess.run(
            ["git", *SAFE_CONFIG, "rev-parse", "--absolute-git-dir", "--git-common-dir"],
            cwd=root, env=git_env(identity=False), stdin=subprocess.DEVNULL,
            capture_output=True, timeout=_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    answers = os.fsdecode(done.stdout).splitlines()
    if done.returncode or len(answers) != 2:
        return None, None
    return Path(answers[0]).resolve(), (root / answers[1]).resolve()


def _read_small(path: Path) -> str | None:
    """A `.git` file's or `commondir`'s text: a regular file, never a FIFO or a link's target."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, 4097)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if len(data) > 4096 else data.decode("utf-8", "surrogateescape")


def _gitdir_of(dot_git: Path) -> Path | None:
    """The directory a `.git` file names (`gitdir: PATH`, relative to the file's directory)."""
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    return Path(os.path.realpath(dot_git.parent / text.removeprefix("gitdir:").strip()))


def _common_of(git_dir: Path) -> Path | None:
    """The common dir a git dir's `commondir` file names, if any."""
    text = _read_small(git_dir / "commondir")
    if text is None or not text.strip():
        return None
    return Path(os.path.realpath(git_dir / text.strip()))


def worktree_common_dir(dot_git: Path) -> Path | None:
    """For the `.git` file of a linked worktree (`gitdir: REPO/.git/worktrees/NAME`), the main
    repository's git dir — if REPO's git dir really registers this worktree (its
    `worktrees/NAME/gitdir` names this .git file back); else None."""
    linked = _gitdir_of(dot_git)
    back = _read_small(linked / "gitdir") if linked is not None else None
    if linked is None or back is None:
        return None
    common = linked.parent.parent
    registered = linked.parent.name == "worktrees" and (common / "HEAD").is_file()
    return common if registered and Path(back.strip()).resolve() == dot_git.resolve() else None
