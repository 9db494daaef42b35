"""A private git directory through which navtui reads and writes its own index: snapshots and
undo are byte-exact whatever the repository's attributes say.

`.gitattributes` can ask git to convert content on the way in and out (`text`, `eol`, `crlf`,
`ident`, `working-tree-encoding`, `filter`), and no command-line setting can switch that off
(`core.attributesFile` ranks below the repository's files; `--attr-source` needs git 2.40).
`$GIT_DIR/info/attributes` ranks above them all, so navtui's private-index commands run with
`GIT_DIR` set to a directory of its own whose `info/attributes` unsets every conversion, the
repository's object store as `GIT_OBJECT_DIRECTORY` and its working tree as `GIT_WORK_TREE`.
The repository's own config is not read there; the few settings that shape what a snapshot
sees (file modes, case, symlinks, excludes, the object format) and the object store's sharing
with a group are copied in, and its `info/exclude` is linked.

The directory is checked before every use (`private_dir`): whatever navtui did not write there
(a `commondir`, alternates, hooks, another config) is removed and its own files written again,
each repair named in `repairs`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_core.git.checkpoints import private_dir
from agent_core.git.process import deadline
from agent_core.git.process.safe_files import read_regular, write_bytes
from agent_core.git.process.stamps import FileStamp, file_stamp

NO_CONVERSION = "* -text !eol -crlf -ident !filter !working-tree-encoding\n"
# Repository settings that change what `git add` records or which files it sees, and the
# permissions of what it writes into the repository's object store (a group-shared one).
_COPIED = (
    r"^core\.(filemode|ignorecase|precomposeunicode|symlinks|excludesfile|trustctime|checkstat"
    r"|protecthfs|protectntfs|sharedrepository)$"
)
_UNBORN = "ref: refs/heads/navtui-snapshots\n"
_HEX = frozenset("0123456789abcdef")


class RawView:
    """The private git directory `path` for the repository at `root` (objects and config in
    `common_dir`, per-worktree config in `git_dir`; `objects` when they are elsewhere;
    `settings_env` when git finds that repository only through it: a nested work tree's view
    takes the outer repository's settings).

    `env()` and `args()` are what a private-index command adds to its environment and argv.
    """

    def __init__(
        self, path: Path, root: Path, git_dir: Path, common_dir: Path,
        objects: Path | None = None, settings_env: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        self._root = root
        self._settings_env = settings_env  # where git finds the repository the settings are of
        self._common_dir = common_dir
        self._configs = (common_dir / "config", git_dir / "config.worktree")
        self._stamps: tuple[FileStamp | None, ...] | None = None
        self._args: tuple[str, ...] = ()
        self._env = {
            "GIT_DIR": str(path),
            "GIT_COMMON_DIR": str(path),  # a `commondir` planted there is never read
            "GIT_WORK_TREE": str(root),
            "GIT_OBJECT_DIRECTORY": str(objects or common_dir / "objects"),
        }
        self._prepared: private_dir.Stamp | None = None
        self._head = _UNBORN
        # The repository's object format ("sha1" or "sha256"), once read; None before then,
        # or when the repository names one git does not know.
        self.object_format: str | None = None
        # (the repository config's stamp, its extensions.objectformat) when last read
        self._format_read: tuple[FileStamp | None, str | None] | None = None
        self.repairs: list[str] = []  # what was found there and undone, one line each

    def env(self) -> dict[str, str]:
        """The variables that point git at the view, checked (and rebuilt) first."""
        if self._prepared != private_dir.stamp(self.path):
            self._prepare()
        return self._env

    def args(self, base_env: dict[str, str]) -> tuple[str, ...]:
        """`-c` settings copied from the repository (read again when its config changes)."""
        stamps = tuple(file_stamp(p) for p in self._configs)
        if stamps != self._stamps:
            self._args = self._read_settings(self._settings_env or base_env)
            self._stamps = stamps
        return self._args

    def point_head(self, commit: str) -> None:
        """Detach the private HEAD at `commit` (a commit of the private index's tree), so
        `git status` there compares the index with a tree it matches."""
        if self._prepared != private_dir.stamp(self.path):
            self._prepare()
        self._head = commit + "\n"
        self._write_head()
        self._prepared = private_dir.stamp(self.path)

    def _write_head(self) -> None:
        write_bytes(self.path / "HEAD", self._head.encode("ascii"))

    def _prepare(self) -> None:
        """Make the view hold exactly what navtui writes there (see `private_dir`)."""
        foreign = private_dir.foreign_entries(self.path)
        private_dir.remove(self.path, foreign)
        info = self.path / "info"
        info.mkdir(parents=True, exist_ok=True)
        (self.path / "refs").mkdir(exist_ok=True)
        rewritten = []
        config = self._format_config()
        wanted = {"HEAD": self._head, "config": config, "info/attributes": NO_CONVERSION}
        for name, text in wanted.items():
            path = self.path / name
            if _read(path) == text:
                continue
            if os.path.lexists(path) and not (name == "HEAD" and _plain_head(_read(path))):
                rewritten.append(name)
            if name == "HEAD":
                found = _read(path)
                self._head = found if found is not None and _plain_head(found) else self._head
                self._write_head()
            else:  # (a link planted there is replaced, not written through)
                write_bytes(path, text.encode("utf-8"))
        exclude = info / "exclude"
        target = self._common_dir / "info" / "exclude"
        if not exclude.is_symlink() or os.readlink(exclude) != str(target):
            if os.path.lexists(exclude):
                rewritten.append("info/exclude")
            exclude.unlink(missing_ok=True)
            exclude.symlink_to(target)
        if foreign or rewritten:
            self.repairs.append(private_dir.repair_note(self.path, foreign, rewritten))
        self._prepared = private_dir.stamp(self.path)

    def _format_config(self) -> str:
        """Repository format and object format: git only reads these from the repository's
        own config file (read again only when that file changed)."""
        stamp = file_stamp(self._configs[0])
        if self._format_read is None or self._format_read[0] != stamp:
            self._format_read = stamp, self._local("extensions.objectformat")
        object_format = self._format_read[1]
        known = object_format in (None, "sha1", "sha256")
        self.object_format = (object_format or "sha1") if known else None
        if object_format in ("sha1", "sha256"):
            return ("[core]\n\trepositoryformatversion = 1\n\tbare = false\n"
                    f"[extensions]\n\tobjectformat = {object_format}\n")
        return "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"

    def _local(self, key: str) -> str | None:
        result = deadline.run(
            ["git", "config", "--file", str(self._configs[0]), "--get", key],
            cwd=self._root, stderr=subprocess.DEVNULL,
        )
        return result.stdout.decode("utf-8", "replace").strip() or None

    def _read_settings(self, base_env: dict[str, str]) -> tuple[str, ...]:
        result = deadline.run(
            ["git", "-c", "core.fsmonitor=false", "config", "-z", "--get-regexp", _COPIED],
            cwd=self._root, env=base_env, stderr=subprocess.DEVNULL,
        )
        args: list[str] = []
        for entry in result.stdout.split(b"\0"):
            key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
            if key:
                args += ["-c", f"{key}={value}"]
        return tuple(args)


def _read(path: Path) -> str | None:
    """A small file navtui wrote, as text; None when it is missing, not a file or too big."""
    try:
        return read_regular(path, 4096).decode("utf-8", "replace")
    except OSError:
        return None


def _plain_head(text: str | None) -> bool:
    """Whether `text` is a HEAD navtui writes: a commit id, or its unborn branch."""
    if text is None:
        return False
    return text == _UNBORN or (text.endswith("\n") and len(text) in (41, 65)
                                and set(text[:-1]) <= _HEX)
