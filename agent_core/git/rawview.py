"""A private git directory through which navtui reads and writes its own index: snapshots and
undo are byte-exact whatever the repository's attributes say.

`.gitattributes` can ask git to convert content on the way in and out (`text`, `eol`, `crlf`,
`ident`, `working-tree-encoding`, `filter`), and no command-line setting can switch that off
(`core.attributesFile` ranks below the repository's files; `--attr-source` needs git 2.40).
`$GIT_DIR/info/attributes` ranks above them all, so navtui's private-index commands run with
`GIT_DIR` set to a directory of its own whose `info/attributes` unsets every conversion, the
repository's object store as `GIT_OBJECT_DIRECTORY` and its working tree as `GIT_WORK_TREE`.
The repository's own config is not read there; the few settings that shape what a snapshot
sees (file modes, case, symlinks, excludes, the object format) are copied in, and its
`info/exclude` is linked.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_core.git.stamps import FileStamp, file_stamp

NO_CONVERSION = "* -text !eol -crlf -ident !filter !working-tree-encoding\n"
# Repository settings that change what `git add` records or which files it sees.
_COPIED = (
    r"^core\.(filemode|ignorecase|precomposeunicode|symlinks|excludesfile|trustctime|checkstat"
    r"|protecthfs|protectntfs)$"
)
_UNBORN = "ref: refs/heads/navtui-snapshots\n"


class RawView:
    """The private git directory `path` for the repository at `root` (objects and config in
    `common_dir`, per-worktree config in `git_dir`; `objects` when they are elsewhere).

    `env()` and `args()` are what a private-index command adds to its environment and argv.
    """

    def __init__(
        self, path: Path, root: Path, git_dir: Path, common_dir: Path,
        objects: Path | None = None,
    ) -> None:
        self.path = path
        self._root = root
        self._common_dir = common_dir
        self._configs = (common_dir / "config", git_dir / "config.worktree")
        self._stamps: tuple[FileStamp | None, ...] | None = None
        self._args: tuple[str, ...] = ()
        self._env = {
            "GIT_DIR": str(path),
            "GIT_WORK_TREE": str(root),
            "GIT_OBJECT_DIRECTORY": str(objects or common_dir / "objects"),
        }
        self._prepared: tuple[FileStamp | None, ...] | None = None

    def env(self) -> dict[str, str]:
        if self._prepared != self._files_stamp():
            self._prepare()
        return self._env

    def _files_stamp(self) -> tuple[FileStamp | None, ...]:
        """Its attributes and config as last written: anything else (a command that rewrote
        them) makes `env` write them again."""
        return file_stamp(self.path / "info" / "attributes"), file_stamp(self.path / "config")

    def args(self, base_env: dict[str, str]) -> tuple[str, ...]:
        """`-c` settings copied from the repository (read again when its config changes)."""
        stamps = tuple(file_stamp(p) for p in self._configs)
        if stamps != self._stamps:
            self._args = self._read_settings(base_env)
            self._stamps = stamps
        return self._args

    def point_head(self, commit: str) -> None:
        """Detach the private HEAD at `commit` (a commit of the private index's tree), so
        `git status` there compares the index with a tree it matches."""
        if self._prepared is None:
            self._prepare()
        head = self.path / "HEAD"
        temporary = self.path / "HEAD.navtui-new"
        temporary.write_text(commit + "\n", encoding="ascii")
        os.replace(temporary, head)

    def _prepare(self) -> None:
        info = self.path / "info"
        info.mkdir(parents=True, exist_ok=True)
        (self.path / "refs").mkdir(exist_ok=True)
        if not (self.path / "HEAD").exists():
            (self.path / "HEAD").write_text(_UNBORN, encoding="ascii")
        attributes = info / "attributes"
        if not attributes.exists() or attributes.read_text(encoding="utf-8") != NO_CONVERSION:
            attributes.write_text(NO_CONVERSION, encoding="utf-8")
        exclude = info / "exclude"
        target = self._common_dir / "info" / "exclude"
        if not exclude.is_symlink() or os.readlink(exclude) != str(target):
            exclude.unlink(missing_ok=True)
            exclude.symlink_to(target)
        (self.path / "config").write_text(self._format_config(), encoding="utf-8")
        self._prepared = self._files_stamp()

    def _format_config(self) -> str:
        """Repository format and object format: git only reads these from the repository's
        own config file."""
        object_format = self._local("extensions.objectformat")
        if object_format in ("sha1", "sha256"):
            return ("[core]\n\trepositoryformatversion = 1\n\tbare = false\n"
                    f"[extensions]\n\tobjectformat = {object_format}\n")
        return "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"

    def _local(self, key: str) -> str | None:
        result = subprocess.run(
            ["git", "config", "--file", str(self._configs[0]), "--get", key],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        return result.stdout.decode("utf-8", "replace").strip() or None

    def _read_settings(self, base_env: dict[str, str]) -> tuple[str, ...]:
        result = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "config", "-z", "--get-regexp", _COPIED],
            cwd=self._root, env=base_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        args: list[str] = []
        for entry in result.stdout.split(b"\0"):
            key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
            if key:
                args += ["-c", f"{key}={value}"]
        return tuple(args)
