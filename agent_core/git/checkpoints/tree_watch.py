"""Whether anything changed in the working tree since the last look, from Linux inotify.

A checkpoint after a step that changed nothing (a read, a search, `ls`) needs no `git status`
when the kernel reported no event in any directory that status reads. The watch is only an
oracle for "nothing happened": any event at all, a lost event (queue overflow) or a change to
what is watched means the caller runs `git status` as before.

Watches are laid by a walk of the tree after a `git status` ran; the checkpoint after a walk runs
`git status` again (`quiet()` says so), so what changed while the walk went on is seen by
git, and from then on every change leaves an event. Not watched, so the caller gets no
`TreeWatch` at all: systems without inotify, network and FUSE file systems (changes made
elsewhere leave no event here), trees with another file system mounted inside, trees with a
nested repository or submodule (a commit inside it changes only its `.git`), trees of more than
`directory_limit()` directories, and a kernel out of watches.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

# Any of these on a watched directory or on an entry in it means the tree may have changed.
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x4000, 0x8000, 0x40000000
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x1000000, 0x2000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_WATCHED = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
    | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF
)
# Events after which the set of watched directories is out of date: walk again.
_RESHAPE = _IN_Q_OVERFLOW | _IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF
_ENTRY_CHANGES = _IN_CREATE | _IN_DELETE | _IN_MOVED_TO | _IN_MOVED_FROM
_EVENT = struct.Struct("iIII")
_GONE = (errno.ENOENT, errno.ENOTDIR)

MAX_DIRECTORIES = 20_000
# File systems whose every change, from any process on this machine, reaches inotify.
LOCAL_FILE_SYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "f2fs", "zfs",
    "bcachefs", "jfs", "reiserfs", "nilfs2",
})


class TreeWatch:
    """inotify watches on every directory `git status` reads under one work tree."""

    def __init__(self, root: Path, fd: int, add_watch: Callable[[int, bytes, int], int]) -> None:
        self.root = root
        self._fd = fd
        self._closing = threading.Lock()
        self._add_watch = add_watch
        self._stale = True  # `git status` must run: the tree may differ from what it last said
        self._reshaped = False  # directories came, went or moved: lay the watches again
        self._rules_changed = False  # a .gitignore changed: so may the directories git reads
        self._entries_changed = False  # an entry was created, deleted or renamed somewhere
        self._complete = False  # every change since the last `synced` left an event
        self._directories: dict[int, bytes] = {}  # watch descriptor -> its directory, relative
        # Entries the events named since the last `synced` (None: some event named none).
        self._paths: set[bytes] | None = set()
        self._entry_paths: set[bytes] = set()  # those of them created, deleted or renamed

    @classmethod
    def start(cls, root: Path, ignored_directories: set[str]) -> TreeWatch | None:
        """Watch `root` (minus `ignored_directories`, relative paths ending in `/`), or None
        where an event cannot be trusted to follow every change (see the module docstring)."""
        if not sys.platform.startswith("linux") or not local_file_system(root):
            return None
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        try:
            init, add_watch = libc.inotify_init1, libc.inotify_add_watch
        except AttributeError:
            return None
        add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watch = cls(root, fd, add_watch)
        if not watch._lay(ignored_directories):
            watch.close()
            return None
        return watch

    def quiet(self) -> bool:
        """True when nothing happened in the tree since the last `synced` (the caller may skip
        `git status`); reads the pending events."""
        for wd, mask, name in self._events():
            self._stale = True
            self._note_path(wd, mask, name)
            if mask & (_RESHAPE | _ENTRY_CHANGES):
                self._entries_changed = True
            if mask & _RESHAPE or (mask & _IN_ISDIR and mask & _ENTRY_CHANGES) or name == b".git":
                self._reshaped = True
            if name == b".gitignore":
                self._rules_changed = True
        return not self._stale

    @property
    def entries_changed(self) -> bool | None:
        """Whether a directory gained, lost or renamed an entry since the last `synced`; None
        when that is not known (the watches were laid since)."""
        return self._entries_changed if self._complete else None

    def changed_paths(self) -> list[str] | None:
        """Every path (relative to the root) an event named since the last `synced`: what
        changed lies among them. None where that is not known: the watches were laid since,
        an event named no entry (a lost event, a watched directory moved), a `.git` or a
        `.gitignore` changed. Call after `quiet`."""
        if not self._complete or self._paths is None or self._rules_changed:
            return None
        return sorted(os.fsdecode(path) for path in self._paths)

    def entry_paths(self) -> list[str]:
        """Those of `changed_paths` whose entry was created, deleted or renamed."""
        return sorted(os.fsdecode(path) for path in self._entry_paths)

    def _note_path(self, wd: int, mask: int, name: bytes) -> None:
        directory = self._directories.get(wd)
        if name and directory is not None and name != b".git" and not mask & _IN_Q_OVERFLOW:
            if self._paths is not None:
                self._paths.add(directory + name)
            if mask & _ENTRY_CHANGES:
                self._entry_paths.add(directory + name)
        elif name or not mask & (_IN_DELETE_SELF | _IN_IGNORED) or directory == b"":
            # (a watched directory deleted is named by its parent's event too)
            self._paths = None

    @property
    def rules_changed(self) -> bool:
        """Whether a .gitignore changed since the last `synced` (the ignored set may differ)."""
        return self._rules_changed

    def synced(self, ignored_directories: set[str], rules_changed: bool = False) -> bool:
        """Note that `git status` ran after the last `quiet`. Lays the watches again if
        directories came, went or moved, or the ignore rules changed (`rules_changed` adds
        git's own files, e.g. `info/exclude`); the next `quiet` is then False, so git looks at
        what changed during the walk. False when the tree can no longer be watched (the caller
        then closes this watch)."""
        self._entries_changed = False
        self._paths, self._entry_paths = set(), set()
        if not (self._reshaped or self._rules_changed or rules_changed):
            self._stale, self._complete = False, True
            return True
        fresh = type(self).start(self.root, ignored_directories)
        if fresh is None:
            return False
        self.close()
        self._fd, fresh._fd = fresh._fd, -1
        self._directories = fresh._directories
        self._stale, self._reshaped, self._rules_changed, self._complete = True, False, False, False
        return True

    def __del__(self) -> None:
        """A watch never closed (its session was not) gives its descriptor back when collected:
        a user has few inotify instances (128 by default), and once they are spent every new
        session runs `git status` at each step."""
        if hasattr(self, "_closing"):
            self.close()

    def close(self) -> None:
        """Give the descriptor back (once, whichever threads call this: a number closed twice
        could by then be another file's)."""
        with self._closing:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def _lay(self, ignored_directories: set[str]) -> bool:
        """Watch every directory under the root but `.git`, ignored directories and symlinks;
        False on a nested repository, `directory_limit()` or the kernel's watch limit."""
        pending = [(os.fsencode(self.root), "")]
        count, limit = 0, directory_limit()
        while pending:
            directory, relative = pending.pop()
            # Watched before it is read: an entry made after the read leaves an event.
            count += 1
            error = self._watch(directory, os.fsencode(relative))
            if count > limit or (error and (not relative or error not in _GONE)):
                return False  # (a subdirectory gone already is fine: its parent's event says so)
            try:
                entries = list(os.scandir(directory))
            except (FileNotFoundError, NotADirectoryError):
                if not relative:
                    return False
                continue
            except OSError:
                return False
            if relative and any(entry.name == b".git" for entry in entries):
                return False
            for entry in entries:
                if entry.name == b".git" or not entry.is_dir(follow_symlinks=False):
                    continue
                child = f"{relative}{os.fsdecode(entry.name)}/"
                if child not in ignored_directories:
                    pending.append((entry.path, child))
        return True

    def _watch(self, directory: bytes, relative: bytes) -> int:
        """Watch `directory` (`relative` to the root, ending in `/` unless it is the root): 0,
        or the errno it failed with."""
        wd = self._add_watch(self._fd, directory, _WATCHED | _IN_ONLYDIR | _IN_DONT_FOLLOW)
        if wd >= 0:
            self._directories[wd] = relative
        return 0 if wd >= 0 else ctypes.get_errno() or errno.EIO

    def _events(self) -> Iterator[tuple[int, int, bytes]]:
        """(watch descriptor, mask, name) of each pending event."""
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                yield wd, mask, data[offset:offset + length].rstrip(b"\0")
                offset += length


def directory_limit() -> int:
    """How many directories one tree may watch: `MAX_DIRECTORIES`, and no more than a quarter of
    the kernel's per-user watch limit, so editors and other watchers keep theirs."""
    try:
        per_user = int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return MAX_DIRECTORIES
    return min(MAX_DIRECTORIES, per_user // 4)


def local_file_system(root: Path, mountinfo: str | None = None) -> bool:
    """Whether `root` lies on a local file system (see `LOCAL_FILE_SYSTEMS`) with no other
    mount inside it, from `mountinfo` (default: /proc/self/mountinfo)."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    where = os.path.realpath(root)
    best, best_type = "", ""
    for line in mountinfo.splitlines():
        fields, _, after = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not after:
            continue
        point = _unescape(parts[4])
        if _inside(point, where) and len(point) >= len(best):
            best, best_type = point, after.split()[0]
        elif point != where and _inside(where, point):
            return False  # another file system mounted inside the tree
    return best_type in LOCAL_FILE_SYSTEMS


def _inside(parent: str, path: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash in paths as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
