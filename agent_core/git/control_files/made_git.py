"""`.git` files and directories the model made in the working tree during a session.

Each is git's control data, not the user's: a config whose fsmonitor or hooks run when git is
used there, a `gitdir:` naming any directory. So each one is named when a step makes it, kept in
every checkpoint (one commit mapping each entry's path, percent-quoted, to its files), and put
back or removed by undo; navtui's own git never enters one (the directory around it is
checkpointed as ordinary files: `work_trees`, which the snapshot engine seeds into its private
index, so git never records it as a gitlink, in navtui's index or the user's).

What is there at the session's start (or was the same when it resumed) is the user's. A `.git`
is read as data only: through directory descriptors that never follow a link, regular files
only (never a FIFO or a device), up to `MAX_FILES` files and `MAX_BYTES` bytes an entry and
`TOTAL_FILES` and `TOTAL_BYTES` for all (one past them is named as outside the checkpoints:
undo leaves it as it is).
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote_from_bytes, unquote_to_bytes

from agent_core.git.objects.commits import commit_tree
from agent_core.git.control_files.git_entries import DOT_GIT, GitEntry, GitEntryScan, work_tree_of
from agent_core.git.objects.object_files import store_object
from agent_core.git.objects.records import GITLINK_MODE, index_records, tree_records
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.stamps import FileStamp, file_stamp
from agent_core.git.objects.tree_patch import serialize_tree

MAX_FILES = 5_000  # an entry
MAX_BYTES = 50_000_000
TOTAL_FILES = 20_000  # all of them, in path order
TOTAL_BYTES = 100_000_000
_SUBJECT = "navtui: .git entries made in the session"
_HELD, _LEFT_OUT = "entry: ", "left out: "
_TREE, _FILE, _EXEC, _LINK = b"40000", b"100644", b"100755", b"120000"
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


class _TooBig(Exception):
    pass


@dataclass(frozen=True)
class Held:
    """One `.git` as a checkpoint holds it: git's mode (40000 a directory, 100644 a file,
    120000 a link) and the id of its tree or blob."""

    mode: str
    object_id: str


def _name(path: str) -> str:
    return quote_from_bytes(os.fsencode(path), safe="")


def _path(name: str) -> str:
    return os.fsdecode(unquote_to_bytes(name))


def _open_dir(root: Path, relative: str) -> int:
    """A descriptor of directory `relative` under `root`, every step on the way a real
    directory (a link anywhere raises OSError)."""
    fd = os.open(root, _DIRECTORY)
    try:
        for part in filter(None, relative.split("/")):
            inner = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError:
        os.close(fd)
        raise
    return fd


def _read_file(name: str, dir_fd: int, limit: int) -> bytes:
    """The bytes of regular file `name` (never a link's target, a FIFO or a device)."""
    fd = os.open(name, _READ, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{name} is not a regular file")
        if st.st_size > limit:
            raise _TooBig
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > limit:
                raise _TooBig
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class _Reader:
    """Reads `.git` entries into objects, or their stat signatures, within `files` entries and
    `data` bytes (`_TooBig` past them)."""

    def __init__(self, objects: Path, object_format: str, files: int, data: int) -> None:
        self._objects = objects
        self._format = object_format
        self.files, self.data = files, data  # what is left

    def _count(self) -> None:
        self.files -= 1
        if self.files < 0:
            raise _TooBig

    def signature(self, parent: int, name: str) -> tuple[object, ...]:
        """What `lstat` says about every entry under `name` (no reads)."""
        self._count()
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        found: list[object] = [(name, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns)]
        if stat.S_ISDIR(st.st_mode):
            fd = os.open(name, _DIRECTORY, dir_fd=parent)
            try:
                found += [self.signature(fd, child) for child in sorted(os.listdir(fd))]
            finally:
                os.close(fd)
        return tuple(found)

    def entry(self, parent: int, name: str) -> tuple[bytes, str]:
        """(git mode, object id) of `name` in directory `parent`, its objects written."""
        self._count()
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            return _LINK, self._blob(os.fsencode(os.readlink(name, dir_fd=parent)))
        if stat.S_ISDIR(st.st_mode):
            fd = os.open(name, _DIRECTORY, dir_fd=parent)
            try:
                rows = []
                for child in sorted(os.listdir(fd)):
                    try:
                        mode, object_id = self.entry(fd, child)
                    except _TooBig:
                        raise
                    except OSError:
                        continue  # a FIFO, a device, gone: not git's data
                    rows.append((mode, os.fsencode(child), bytes.fromhex(object_id)))
            finally:
                os.close(fd)
            return _TREE, store_object(self._objects, self._format, b"tree", serialize_tree(rows))
        data = _read_file(name, parent, self.data)
        self.data -= len(data)
        return (_EXEC if st.st_mode & 0o100 else _FILE), self._blob(data)

    def _blob(self, data: bytes) -> str:
        return store_object(self._objects, self._format, b"blob", data)


class MadeGitEntries:
    """The `.git` entries of one session's working tree at `root`, told apart from those the
    user had (see the module doc). `git` is the repository's runner (its raw view prepared: its
    object format known)."""

    def __init__(self, git: GitRunner, root: Path, quarantine: Path) -> None:
        self._git = git
        self._root = root
        self._quarantine = quarantine  # where a replaced top `.git` link's stand-in goes
        self._top_link: str | None = None  # the repository's `.git` when it is a link
        self._top_named = False
        self._index_seen: FileStamp | None = None  # the user's index when `unstage` last read it
        self._notes: list[str] = []  # said by the next `news`
        self._scan = GitEntryScan(root)
        self._start: dict[str, GitEntry] = {}
        self.made: dict[str, GitEntry] = {}  # path -> what is there now
        self.fresh: list[str] = []  # those the last step made or changed
        self._reported: dict[str, GitEntry] = {}  # as the last `news` saw them
        self._signature: tuple[object, ...] | None = None
        self._commit: str | None = None
        self._held: dict[str, dict[str, Held]] = {}  # commit -> path -> what it holds
        self._left: dict[str, tuple[str, ...]] = {}  # commit -> paths it could not hold
        self.left_out: dict[str, str] = {}  # path -> why (for the outside-checkpoints notice)

    def begin(self, held: Iterable[str] = ()) -> None:
        """Note what is there now as the user's, but for `held` (the entries a resumed
        session's last checkpoint holds as made)."""
        found = self._scan.scan()
        known = set(held)
        top = self._root / DOT_GIT
        self._top_link = os.readlink(top) if os.path.islink(top) else None
        self._start = {path: entry for path, entry in found.items() if path not in known}
        self.made = {path: entry for path, entry in found.items() if path in known}
        self._reported = dict(self.made)

    def check(self, skip: Iterable[str] = (), look: bool = True, again: bool = False) -> None:
        """After a step: look again (not under `skip`, ignored directories too big to
        checkpoint) unless not `look`; `fresh` says what the step made or changed (`again`: a
        second look after the same step adds to it)."""
        if not again:
            self.fresh = []
        if not look:
            return
        skipped = tuple(path.rstrip("/") for path in skip)
        found = self._scan.scan(skipped)
        if found.get(DOT_GIT) != self._start.get(DOT_GIT):
            self._top_changed()
            found = self._scan.scan(skipped)
        kept = {path: entry for path, entry in self.made.items()
                if any(path.startswith(top + "/") for top in skipped)}
        before, self.made = self.made, kept | {path: entry for path, entry in found.items()
                                               if self._start.get(path) != entry
                                               and path != DOT_GIT}
        self.fresh += [path for path, entry in sorted(self.made.items())
                       if before.get(path) != entry]

    def news(self) -> list[str]:
        """The entries made or changed since the last call (one line each, for the step)."""
        lines, self._notes = self._notes, []
        for path, entry in sorted(self.made.items()):
            if self._reported.get(path) != entry:
                lines.append(self._line(path, entry, "made" if path not in self._reported
                                        else "changed"))
        self._reported = dict(self.made)
        return lines

    def _top_changed(self) -> None:
        """The repository's own `.git` is not what it was at the start. A link (the one `.git`
        the sandbox cannot cover) comes back at once, whatever the model put there going to
        quarantine: your next git would use it. Anything else (possible only without the
        sandbox, or by your own hand) is named once, never kept or undone as the model's."""
        top = self._root / DOT_GIT
        if self._top_link is None:
            if not self._top_named:
                self._top_named = True
                self._notes.append(".git (the repository's own, not the one there at the "
                                   "session's start: replaced or moved; check it before you "
                                   "run git here)")
            return
        kept = self._quarantine / f"top-git-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            if os.path.lexists(top):
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(top, kept)
            os.symlink(self._top_link, top)
        except OSError as error:
            self._notes.append(f".git (replaced by the model; your repository's link to "
                               f"{self._top_link} could not be put back: {error.strerror or error}"
                               "): put it back before you run git here")
            return
        self._notes.append(f".git (replaced by the model: your repository's link to "
                           f"{self._top_link} is back; what the model put there is in {kept})")

    def unstage(self, user_index: Path) -> None:
        """Take out of the user's index (`user_index`, read again only when it changed) a
        gitlink staged for a repository the model made: without the sandbox its `git add n`
        writes there, and the user's next `git status` would run that repository's fsmonitor,
        `git commit` its hooks."""
        trees = self.work_trees()
        stamp = file_stamp(user_index)
        if not trees or stamp == self._index_seen:
            return
        listing = self._git.run_full("ls-files", "-s", "-z", "--", *trees,
                                     env={"GIT_LITERAL_PATHSPECS": "1"}).stdout
        staged = [entry.path for entry in index_records(listing) if entry.mode == GITLINK_MODE]
        if staged:
            self._git.run("update-index", "-z", "--force-remove", "--stdin",
                          stdin=b"".join(path + b"\0" for path in staged))
            self._notes += [f"{os.fsdecode(path)} (a gitlink the model staged in your index for "
                            "a repository it made: taken out again, or your next `git status` "
                            "would run that repository's fsmonitor)" for path in staged]
        self._index_seen = file_stamp(user_index)

    def work_trees(self, not_in: Iterable[str] = ()) -> list[str]:
        """The directories holding entries made where none was at the start: checkpointed
        as ordinary directories, never as gitlinks (but those in the nested repositories at
        `not_in`, whose own snapshots do that)."""
        outside = tuple(f"{path}/" for path in not_in)
        return sorted(work_tree_of(path) for path in self.made
                      if path not in self._start and not path.startswith(outside))

    def _line(self, path: str, entry: GitEntry, what: str) -> str:
        where = work_tree_of(path) or "the repository's top"
        kind = {"dir": "a git directory", "file": "a `gitdir:` file", "link": "a link"}.get(
            entry.kind, "a special file")
        return (f"{path} ({what} by the model: {kind}): git's control data, not yours — its "
                f"config and hooks would run if you used git in {where}; navtui never enters "
                "it, your index never lists it, and undo removes it")

    # -- capture -------------------------------------------------------------------------

    def capture(self) -> str | None:
        """A commit holding every made entry (None when there is none); the last one when
        nothing under them moved since."""
        if not self.made:
            self._signature = None
            return None
        raw = self._git.raw
        objects = self._git.object_directory
        if raw is None or raw.object_format is None or objects is None:
            return None
        signature = self._signatures(_Reader(objects, raw.object_format, TOTAL_FILES, 0))
        if signature == self._signature and self._commit is not None:
            return self._commit
        rows, left = [], []
        files, data = TOTAL_FILES, TOTAL_BYTES  # what all of them may still hold
        for path in sorted(self.made):
            reader = _Reader(objects, raw.object_format, min(MAX_FILES, files),
                             min(MAX_BYTES, data))
            try:
                mode, object_id = self._read(reader, path)
            except _TooBig:
                left.append(path)
                self.left_out[path] = (f"{path} (a .git the model made, over {MAX_FILES:,} "
                                       f"files or {MAX_BYTES // 1_000_000} MB, or past "
                                       f"{TOTAL_FILES:,} files of all such: undo leaves it)")
                continue
            except OSError:
                continue  # gone, or a link on the way: nothing of it to keep
            files -= min(MAX_FILES, files) - reader.files
            data -= min(MAX_BYTES, data) - reader.data
            rows.append((mode, _name(path).encode(), bytes.fromhex(object_id)))
        tree = store_object(objects, raw.object_format, b"tree", serialize_tree(rows))
        message = (_SUBJECT + "\n\n" + "".join(f"{_HELD}{_name(p)}\n" for p in sorted(self.made)
                                                if p not in left)
                   + "".join(f"{_LEFT_OUT}{_name(p)}\n" for p in left))
        self._commit = commit_tree(self._git, objects, tree, [], message)
        self._signature = signature
        return self._commit

    def _signatures(self, reader: _Reader) -> tuple[object, ...]:
        """Every made entry's stat signature (one reader: past its budget, the rest are
        named, not walked)."""
        found: list[object] = []
        for path in sorted(self.made):
            parent, name = work_tree_of(path), path.rpartition("/")[2]
            try:
                fd = _open_dir(self._root, parent)
            except OSError:
                found.append((path, None))
                continue
            try:
                found.append((path, reader.signature(fd, name)))
            except _TooBig:
                found.append((path, "big"))
            except OSError:
                found.append((path, None))
            finally:
                os.close(fd)
        return tuple(found)

    def _read(self, reader: _Reader, path: str) -> tuple[bytes, str]:
        fd = _open_dir(self._root, work_tree_of(path))
        try:
            return reader.entry(fd, path.rpartition("/")[2])
        finally:
            os.close(fd)

    # -- read back -----------------------------------------------------------------------

    def held(self, commit: str | None) -> dict[str, Held]:
        """Entry path -> what capture `commit` holds (empty for None)."""
        if commit is None:
            return {}
        if commit not in self._held:
            self._held[commit] = {
                _path(entry.path.decode("ascii")): Held(entry.mode, entry.object_id)
                for entry in tree_records(self._git.run("ls-tree", "-z", commit))
            }
        return self._held[commit]

    def left_in(self, commit: str | None) -> tuple[str, ...]:
        """The entries capture `commit` names but could not hold."""
        if commit is None:
            return ()
        if commit not in self._left:
            message = self._git.run("log", "-1", "--format=%B", commit).decode("ascii", "replace")
            self._left[commit] = tuple(_path(line[len(_LEFT_OUT):]) for line in
                                       message.splitlines() if line.startswith(_LEFT_OUT))
        return self._left[commit]

    def named(self, commit: str | None) -> list[str]:
        """Every entry capture `commit` was made for, held or left out."""
        return sorted({*self.held(commit), *self.left_in(commit)})

    # -- restore -------------------------------------------------------------------------

    def restore(self, now: str | None, target: str | None) -> tuple[list[str], list[str]]:
        """Make the entries as capture `target` holds them, from capture `now` (just made):
        removed where it had none, written back where it differs. Returns (paths changed,
        `path: why` of those left as they are)."""
        current, wanted = self.held(now), self.held(target)
        too_big = set(self.left_in(now))
        changed, left = [], []
        for path in sorted(set(current) | set(wanted) | too_big):
            if current.get(path) == wanted.get(path) and path not in too_big:
                continue
            if path in too_big:
                left.append(f"{path}: a .git the model made, too big to keep, so undo left it")
                continue
            try:
                self._put(path, wanted.get(path))
            except OSError as error:
                left.append(f"{path}: {error.strerror or error}")
                continue
            changed.append(path)
        self.check()
        self._reported = dict(self.made)
        self._signature = None
        return changed, left

    def _put(self, path: str, held: Held | None) -> None:
        """Replace whatever is at `path` by `held` (nothing: removed), through descriptors
        that follow no link."""
        parent_path, name = work_tree_of(path), path.rpartition("/")[2]
        parent = _open_dir(self._root, parent_path)
        try:
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                shutil.rmtree(name, dir_fd=parent)
            elif st is not None:
                os.unlink(name, dir_fd=parent)
            if held is not None:
                self._write(parent, name, held.mode.encode(), held.object_id)
        finally:
            os.close(parent)
        if held is None and parent_path:  # the directory it leaves empty goes too, as git's would
            above = _open_dir(self._root, work_tree_of(parent_path))
            try:
                os.rmdir(parent_path.rpartition("/")[2], dir_fd=above)
            except OSError:
                pass
            finally:
                os.close(above)

    def _write(self, parent: int, name: str, mode: bytes, object_id: str) -> None:
        mode = mode.lstrip(b"0")  # (ls-tree writes a tree's 040000)
        if mode == _TREE:
            os.mkdir(name, 0o755, dir_fd=parent)
            fd = os.open(name, _DIRECTORY, dir_fd=parent)
            try:
                for entry in tree_records(self._git.run("ls-tree", "-z", object_id)):
                    self._write(fd, os.fsdecode(entry.path), entry.mode.encode(), entry.object_id)
            finally:
                os.close(fd)
            return
        data = next(self._git.cat_blobs([object_id]))
        if mode == _LINK:
            os.symlink(os.fsdecode(data), name, dir_fd=parent)
            return
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o755 if mode == _EXEC else 0o644, dir_fd=parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
