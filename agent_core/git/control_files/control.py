"""Git's own files in a repository, the ones through which it makes git run code or look
elsewhere: its control files (`control_paths`: config, hooks, `info/*`, `commondir`, alternates,
those of linked worktrees and submodules, an in-git-dir `core.hooksPath`). Each checkpoint keeps
them as a commit of their own, so a step's diff shows what it did to them and undo puts them back.

navtui's own git calls ignore them (`agent_core.git.process.runner`), but the user's next `git commit`
would not. A checkpoint only stats them; they are read (and hashed into git objects, never run)
when a file's size, times, mode or inode moved, or a hook appeared or went away.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_core.git.objects.commits import commit_tree
from agent_core.git.objects.records import raw_records
from agent_core.git.control_files.config_read import settings
from agent_core.git.control_files.control_effects import Effect, config_effect, file_effect
from agent_core.git.control_files.control_paths import ControlPaths, configured_hooks_dir
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.safe_files import read_regular
from agent_core.git.process.stamps import file_stamp

# The line that starts a step diff's part about git's own files (`split_control_diff`).
CONTROL_DIFF_HEADER = "# navtui: git's own config and hooks changed:\n"
_LINK, _EXEC, _FILE = "120000", "100755", "100644"
MAX_FILE_BYTES = 1_000_000  # a bigger (or unreadable) config or hook is left out, and named
_SUBJECT = "navtui: git config and hooks"
_LEFT_OUT = "left out: "

Signature = tuple[tuple[str, int, int, int, int, int], ...]


@dataclass(frozen=True)
class ControlChange:
    """One of git's own files that differs between two states; `path` relative to the git dir."""

    path: str
    what: str  # added | removed | changed
    old_blob: str | None
    new_blob: str | None
    new_mode: str = "000000"  # git's mode of the new file (100755: executable)


def split_control_diff(diff: str) -> tuple[str, str]:
    """(the working tree's part, the part about git's own files) of a step diff."""
    at = diff.find(CONTROL_DIFF_HEADER)
    if at < 0:
        return diff, ""
    return diff[:at], diff[at + len(CONTROL_DIFF_HEADER):]


class ControlFiles:
    """Captures and restores git's control files (`control_paths`) as commits whose paths are
    relative to the common git dir."""

    def __init__(self, git: GitRunner, root: Path, git_dir: Path, common_dir: Path) -> None:
        self._git = git
        self._root = root
        self._git_dir = git_dir
        self._common = common_dir
        self._paths = ControlPaths(common_dir, git_dir)
        self.tree_hooks_dir: str | None = None  # core.hooksPath inside the working tree
        self._hooks_read_for: tuple[object, ...] | None = None
        self._signature: Signature | None = None
        self._commit: str | None = None
        self._tree: dict[str, str] = {}  # commit -> tree
        self._left: dict[str, tuple[str, ...]] = {}  # commit -> files it could not hold

    # -- where they are ----------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The working tree's top directory."""
        return self._root

    @property
    def shown_prefix(self) -> str:
        """How the git dir is named to the user: `.git/`, or its path for a linked worktree."""
        try:
            return self._common.relative_to(self._root).as_posix() + "/"
        except ValueError:
            return str(self._common).rstrip("/") + "/"

    def _files(self) -> list[Path]:
        self._read_hooks_path()
        return self._paths.files()

    def _read_hooks_path(self) -> None:
        """Where `core.hooksPath` points, read again when a config file changed: inside the
        git dir its files are control files; inside the working tree it is `tree_hooks_dir`."""
        configs = (self._common / "config", self._git_dir / "config.worktree")
        stamp = tuple(file_stamp(p) for p in configs)
        if stamp == self._hooks_read_for:
            return
        self._hooks_read_for = stamp
        where = configured_hooks_dir(self._root, self._git.base_env)
        self._paths.hooks_dir, self.tree_hooks_dir = None, None
        if where is None:
            return
        if where == self._common or self._common in where.parents:
            self._paths.hooks_dir = where
        elif self._root in where.parents:
            self.tree_hooks_dir = where.relative_to(self._root).as_posix()

    def _relative(self, path: Path) -> str | None:
        try:
            return path.relative_to(self._common).as_posix()
        except ValueError:
            return None

    def signature(self) -> Signature:
        """What `stat` says about each file (no reads): cheap enough for every checkpoint."""
        found = []
        for path in self._files():
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found.append((str(path), st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns,
                          st.st_ctime_ns))
        return tuple(found)

    def touched(self) -> bool:
        """Whether any file may have changed since the last `current` (stat only)."""
        return self._signature is None or self.signature() != self._signature

    # -- capture ------------------------------------------------------------------------

    def current(self, index: Path) -> str:
        """A commit of the files as they are now, through the private index file `index`;
        the previous one when nothing was touched since it was made."""
        signature = self.signature()
        if signature == self._signature and self._commit is not None:
            return self._commit
        tree, left = self._write_tree(index)
        if (
            self._commit is None
            or self.tree(self._commit) != tree
            or self.left_out(self._commit) != left
        ):
            message = _SUBJECT + "\n\n" + "".join(f"{_LEFT_OUT}{name}\n" for name in left)
            self._commit = commit_tree(self._git, self._git.object_directory, tree, [], message)
            self._tree[self._commit], self._left[self._commit] = tree, left
        self._signature = signature
        return self._commit

    @property
    def common(self) -> Path:
        """The git dir the captured paths are relative to."""
        return self._common

    def paths_in(self, commit: str) -> list[str]:
        """The paths capture `commit` holds."""
        listing = self._git.run("ls-tree", "-r", "-z", "--name-only", commit)
        return [os.fsdecode(p) for p in listing.split(b"\0") if p]

    def left_out(self, commit: str) -> tuple[str, ...]:
        """Files capture `commit` could not hold (over `MAX_FILE_BYTES` or unreadable)."""
        if commit not in self._left:
            message = self._git.run("log", "-1", "--format=%B", commit).decode("utf-8", "replace")
            self._left[commit] = tuple(
                line[len(_LEFT_OUT):] for line in message.splitlines() if line.startswith(_LEFT_OUT)
            )
        return self._left[commit]

    def shown_left_out(self) -> list[str]:
        """`.git/...` names of the files the last capture could not hold."""
        if self._commit is None:
            return []
        return [self.shown_prefix + name for name in self.left_out(self._commit)]

    def changed_since(self, commit: str | None, index: Path) -> list[ControlChange]:
        """What differs between `commit` and the files now (nothing read when none was touched
        since `commit` was the last capture)."""
        if commit is None:
            return []
        return self.changes(commit, self.current(index))

    def adopt(self, commit: str | None) -> None:
        """Take `commit` as the last capture (a resumed session's last checkpoint's); the files
        are read afresh at the next capture and `commit` is reused if they still match it."""
        self._commit, self._signature = commit, None

    def tree(self, commit: str) -> str:
        if commit not in self._tree:
            self._tree[commit] = self._git.line("rev-parse", commit + "^{tree}")
        return self._tree[commit]

    def _write_tree(self, index: Path) -> tuple[str, tuple[str, ...]]:
        """(tree of the files now, names of those left out: too big, unreadable, vanished)."""
        regular: list[tuple[str, str, Path]] = []
        entries: list[tuple[str, str, str]] = []
        left: list[str] = []
        for path in self._files():
            name = self._relative(path)
            try:
                st = os.lstat(path)
                if name is None:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    entries.append((_LINK, self._hash(os.fsencode(os.readlink(path))), name))
                elif not stat.S_ISREG(st.st_mode):
                    continue
                elif st.st_size > MAX_FILE_BYTES or not os.access(path, os.R_OK):
                    left.append(name)
                else:
                    regular.append((name, _EXEC if st.st_mode & 0o100 else _FILE, path))
            except OSError:
                continue
        for (name, mode, _), blob in zip(regular, self._hash_files([p for _, _, p in regular])):
            if blob is None:
                left.append(name)
            else:
                entries.append((mode, blob, name))
        if not entries:
            return self._git.empty_tree, tuple(sorted(left))
        index.unlink(missing_ok=True)
        listing = b"".join(
            f"{mode} {blob}\t".encode() + name.encode("utf-8", "surrogateescape") + b"\0"
            for mode, blob, name in entries
        )
        self._git.run("update-index", "-z", "--index-info", index=index, stdin=listing)
        return self._git.line("write-tree", index=index), tuple(sorted(left))

    def _hash_files(self, paths: list[Path]) -> list[str | None]:
        """Blob ids of `paths` written into the object store (None for one that went away)."""
        if not paths:
            return []
        names = [os.fsencode(p) for p in paths]
        if not any(b"\n" in name for name in names):
            result = self._git.run_full(
                "hash-object", "-w", "--no-filters", "--stdin-paths",
                stdin=b"".join(n + b"\n" for n in names), ok_codes=(0, 1, 128),
            )
            if result.returncode == 0:
                return list(result.stdout.decode().split())
        blobs: list[str | None] = []
        for path in paths:  # one at a time: a file changed or vanished under the batch
            try:
                data: bytes | None = read_regular(path, MAX_FILE_BYTES)
            except OSError:  # a link, FIFO or device, over the cap, gone
                data = None
            blobs.append(None if data is None else self._hash(data))
        return blobs

    def _hash(self, data: bytes) -> str:
        out = self._git.run("hash-object", "-w", "--no-filters", "--stdin", stdin=data)
        return out.decode().strip()

    # -- compare, show, restore -------------------------------------------------------------

    def changes(self, old: str, new: str) -> list[ControlChange]:
        if old == new or self.tree(old) == self.tree(new):
            return []
        out = self._git.run("diff-tree", "-r", "-z", "--no-renames", old, new)
        return [
            ControlChange(os.fsdecode(c.path), {"A": "added", "D": "removed"}.get(c.status, "changed"),
                          None if c.added else c.old_id, None if c.removed else c.new_id,
                          c.new_mode)
            for c in raw_records(out)
        ]

    def describe(self, changes: list[ControlChange]) -> list[str]:
        """One line per change: `.git/config (changed): core.pager = less` (settings added)."""
        lines = []
        for change in changes:
            detail = ""
            if change.path.rsplit("/", 1)[-1] in ("config", "config.worktree"):
                old, new = (self._config(change.old_blob), self._config(change.new_blob))
                added = sorted((new or set()) - (old or set()))
                if added:
                    detail = ": " + "; ".join(added[:8])
            lines.append(f"{self.shown_prefix}{change.path} ({change.what}){detail}")
        return lines

    def effect(self, change: ControlChange) -> Effect:
        """What `change` does to the user's next git commands, and whether it plants code."""
        name = change.path.rsplit("/", 1)[-1]
        if name in ("config", "config.worktree") and change.new_blob is not None:
            new = self._config(change.new_blob)
            if new is None:
                return Effect("git cannot read it: your next git command here fails on it",
                              planted=True)
            return config_effect(sorted(new - (self._config(change.old_blob) or set())))
        parent = (self._common / change.path).parent
        is_hook = parent.name == "hooks" or parent == self._paths.hooks_dir
        runnable = change.new_mode in (_EXEC, _LINK)
        return file_effect(change.path, change.what, is_hook, runnable)

    def _config(self, blob: str | None) -> set[str] | None:
        """The settings of config `blob` as git reads them (None: git cannot)."""
        if blob is None:
            return set()
        found = settings(next(self._git.cat_blobs([blob])))
        return None if found is None else set(found)

    def diff(self, old: str, new: str, limit: int) -> str:
        """The unified diff between two captures (paths shown as `.git/...`), cut near `limit`."""
        if old == new or self.tree(old) == self.tree(new):
            return ""
        prefix = self.shown_prefix.lstrip("/")
        out = self._git.run(
            "diff-tree", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
            f"--src-prefix=a/{prefix}", f"--dst-prefix=b/{prefix}", old, new,
        )
        text = out.decode("utf-8", "replace")
        if len(text) > limit:
            text = (text[:limit] + f"\n# navtui: cut at {limit} characters; "
                    f"`git diff-tree -p {old} {new}` shows all of it\n")
        return CONTROL_DIFF_HEADER + text

    def restore(
        self, now: str, target: str, only: set[str] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Make the files match capture `target` (from `now`, a capture of them as they are):
        rewritten with their mode, removed when `target` has none; with `only`, just those
        paths (relative to the git dir).

        Returns (names restored, `name: why` of those left as they are): nothing is written or
        removed through a directory that became a symlink (it could lead out of the git dir).
        """
        changes = [c for c in self.changes(now, target) if only is None or c.path in only]
        if not changes:
            return [], []
        listing = self._git.run("ls-tree", "-r", "-z", target).split(b"\0")
        modes = {}
        for entry in filter(None, listing):
            meta, name = entry.split(b"\t", 1)
            modes[os.fsdecode(name)] = meta.split()[0].decode()
        wanted = [c for c in changes if c.new_blob is not None]
        blobs = self._git.cat_blobs([c.new_blob for c in wanted if c.new_blob])
        contents = dict(zip((c.path for c in wanted), blobs))
        done, left = [], []
        never_held = set(self.left_out(target))
        for change in changes:
            path = self._common / change.path
            shown = f"{self.shown_prefix}{change.path}"
            if change.new_blob is None and change.path in never_held:
                left.append(f"{shown}: not in the checkpoint (over {MAX_FILE_BYTES:,} bytes or "
                            "unreadable then), so undo cannot tell what it was")
                continue
            try:
                if os.path.realpath(path.parent) != str(path.parent):
                    raise OSError(f"{path.parent.name} is no longer a directory of the git dir")
                if change.new_blob is None:
                    path.unlink(missing_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _write(path, contents[change.path], modes[change.path])
            except OSError as error:
                left.append(f"{shown}: {error.strerror or error}")
                continue
            done.append(shown)
        self.adopt(target)
        return done, left


def _write(path: Path, data: bytes, mode: str) -> None:
    """Replace `path` atomically with `data` as a file of git `mode` (a link for 120000)."""
    temporary = path.with_name(f".{path.name}.navtui-restore")
    temporary.unlink(missing_ok=True)
    if mode == _LINK:
        os.symlink(os.fsdecode(data), temporary)
    else:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            kept = os.lstat(path).st_mode & 0o777
        except OSError:
            kept = 0o644
        permissions = kept | ((kept & 0o444) >> 2) if mode == _EXEC else kept & ~0o111
        os.chmod(temporary, permissions)
    os.replace(temporary, path)
