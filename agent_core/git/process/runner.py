"""The one way navtui runs `git`: an environment that never leaks into the user's own state, and
no code the repository (or the model) configured ever runs.

Repository-controlled execution is switched off on every call: fsmonitor, hooks (including
`reference-transaction` and `post-index-change`, which plumbing triggers), pagers, external diff
and textconv drivers, transports, GPG signing, auto-gc, and every configured `filter.<name>`
(clean, smudge and long-running process filters: git only allows blanking a filter per name, so
the names are read from the config and blanked one by one, read again whenever a config file
changes).
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from agent_core.git.process import deadline
from agent_core.git.process.batch_check import BatchCheck
from agent_core.git.process.diff_tree_process import DiffTreeProcess
from agent_core.git.errors import WorkspaceError
from agent_core.git.process.kept_process import stop
from agent_core.git.checkpoints.rawview import RawView
from agent_core.git.process.stamps import FileStamp, file_stamp

# Variables that would point git at another repository, index or object store than ours.
_REPO_LOCATION_VARS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX",
    "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
)

# Settings that keep our snapshots faithful and run none of the repository's code.
SAFE_CONFIG = (
    "-c", "core.quotePath=false",
    "-c", "core.safecrlf=false",
    "-c", "core.autocrlf=false",
    "-c", "advice.addEmbeddedRepo=false",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
    "-c", "core.attributesFile=/dev/null",
    "-c", "diff.external=",
    "-c", "protocol.allow=never",
    "-c", "commit.gpgSign=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
)

_FILTER_KEYS = ("clean", "smudge", "process")
# git keeps an untracked cache for `status --untracked-files=all` only when that mode is the
# configured one.
_UNTRACKED_CACHE = ("-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all")
# What the user's config must not change in a private index: it is kept whole (git writes a
# split index's shared part into the git directory it runs in, navtui's raw view or the user's
# .git, where navtui's checks would remove it or the user's git expire it), and git looks at
# every file (`core.ignoreStat` marks each file it adds as unchanged: no later edit is seen).
_PRIVATE_INDEX = ("-c", "core.splitIndex=false", "-c", "core.ignoreStat=false")
# A private index navtui keeps split (`GitRunner.split_indexes`): most entries in a shared file
# in navtui's raw view, written again only when a fifth of them changed, kept two weeks unused.
_SPLIT_PRIVATE_INDEX = (
    "-c", "core.splitIndex=true", "-c", "splitIndex.maxPercentChange=20",
    "-c", "splitIndex.sharedIndexExpire=2.weeks.ago", "-c", "core.ignoreStat=false",
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "navtui", "GIT_AUTHOR_EMAIL": "navtui@localhost",
    "GIT_COMMITTER_NAME": "navtui", "GIT_COMMITTER_EMAIL": "navtui@localhost",
}


def git_env(identity: bool) -> dict[str, str]:
    """The environment navtui runs git in: the caller's, less what would point git elsewhere."""
    env = {k: v for k, v in os.environ.items() if k not in _REPO_LOCATION_VARS}
    # Read-only commands must not refresh the user's index behind their back.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_PAGER"] = "cat"
    if identity:
        env.update(IDENTITY)
    return env


class _FilterBlanker:
    """`-c filter.<name>.clean= …` for every filter driver the config names.

    Re-reads the config only when one of the files it came from (or the repository's own
    config files) changed since the last read.
    """

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self._root = root
        self._env = env
        self._watched: dict[Path, FileStamp | None] = {}
        self._args: tuple[str, ...] = ()

    def _fresh(self) -> bool:
        return bool(self._watched) and all(file_stamp(p) == s for p, s in self._watched.items())

    def args(self) -> tuple[str, ...]:
        if self._fresh():
            return self._args
        result = deadline.run(
            ["git", *SAFE_CONFIG, "config", "--show-origin", "--name-only", "-z",
             "--get-regexp", r"^filter\."],
            cwd=self._root, env=self._env, stderr=subprocess.DEVNULL,
        )
        origins, names = set(), set()
        fields = result.stdout.split(b"\0")
        for origin, key in zip(fields[0::2], fields[1::2]):
            if origin.startswith(b"file:"):
                origins.add(self._root / os.fsdecode(origin[5:]))
            name = os.fsdecode(key).split(".", 1)[-1].rpartition(".")[0]
            if name:
                names.add(name)
        args: list[str] = []
        for name in sorted(names):
            args += ["-c", f"filter.{name}.required=false"]
            args += [arg for key in _FILTER_KEYS for arg in ("-c", f"filter.{name}.{key}=")]
        watched = origins | set(self._config_files())
        self._watched = {p: file_stamp(p) for p in watched}
        self._args = tuple(args)
        return self._args

    def _config_files(self) -> list[Path]:
        result = deadline.run(
            ["git", *SAFE_CONFIG, "rev-parse", "--git-dir", "--git-common-dir"],
            cwd=self._root, env=self._env, stderr=subprocess.DEVNULL,
        )
        dirs = [self._root / os.fsdecode(d) for d in result.stdout.split(b"\n") if d]
        home = Path(os.environ.get("HOME", "/nonexistent"))
        xdg = Path(os.environ.get("XDG_CONFIG_HOME", home / ".config"))
        return [
            *(d / name for d in dirs for name in ("config", "config.worktree")),
            Path(os.environ.get("GIT_CONFIG_GLOBAL", home / ".gitconfig")),
            xdg / "git" / "config",
            Path(os.environ.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")),
        ]


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except OSError:  # git went away; the reader reports it
        pass


class GitRunner:
    """`git` in one repository's working tree; `index` selects a private index file.

    Commits are made as `navtui` unless `identity=False` (then the user's configured one).
    `location` sets where the repository's parts are (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`, ...)
    instead of git finding them from `root`. With a `raw` view, commands on a private index run
    through it (no content conversion) with git's untracked cache on, so a walk of unchanged
    directories is only `stat` calls. `blank_filters=False` is for a runner that only reads and
    packs objects (no command of it converts content), so the config's filters are not read.
    """

    def __init__(
        self, root: Path, *, identity: bool = True, location: dict[str, str] | None = None,
        raw: RawView | None = None, blank_filters: bool = True,
    ) -> None:
        self.root = root
        self.raw = raw
        self._env = {**git_env(identity), **(location or {})}
        self._filters = _FilterBlanker(root, self._env) if blank_filters else None
        self._sizes = BatchCheck(self.argv, root, self._env)
        self._pairs = DiffTreeProcess(self.argv, root, self._env)
        # Private indexes every command keeps split (through the raw view only: git writes the
        # shared part into the git directory it runs in); the others are kept whole.
        self.split_indexes: set[Path] = set()

    @property
    def base_env(self) -> dict[str, str]:
        """The environment every call of this runner starts from (no safety settings in it)."""
        return dict(self._env)

    @property
    def object_directory(self) -> Path | None:
        """Where this runner's git writes objects, when its `location` names it."""
        directory = self._env.get("GIT_OBJECT_DIRECTORY")
        return Path(directory) if directory else None

    @functools.cached_property
    def empty_tree(self) -> str:
        """The empty tree's id in this repository's object format (SHA-1 or SHA-256): hashed
        here once the raw view has read the format, else by git."""
        object_format = self.raw.object_format if self.raw is not None else None
        if object_format is not None:
            return hashlib.new(object_format, b"tree 0\0").hexdigest()
        return self.line("hash-object", "-t", "tree", "/dev/null")

    def argv(self, *args: str) -> list[str]:
        """The full command line for `git args` with every safety setting in front."""
        filters = self._filters.args() if self._filters is not None else ()
        return ["git", *SAFE_CONFIG, *filters, *args]

    def _command(
        self, args: tuple[str, ...], index: Path | None, env: dict[str, str] | None,
    ) -> tuple[list[str], dict[str, str]]:
        """argv and environment for `git args` (on the private `index` when given)."""
        if index is None:
            return self.argv(*args), {**self._env, **(env or {})}
        if self.raw is None:
            return (self.argv(*_PRIVATE_INDEX, *args),
                    {**self._env, "GIT_INDEX_FILE": str(index), **(env or {})})
        kept = _SPLIT_PRIVATE_INDEX if index in self.split_indexes else _PRIVATE_INDEX
        settings = (*_UNTRACKED_CACHE, *kept, *self.raw.args(self._env))
        full = {**self._env, **self.raw.env(), "GIT_INDEX_FILE": str(index), **(env or {})}
        filters = self._filters.args() if self._filters is not None else ()
        return ["git", *settings, *SAFE_CONFIG, *filters, *args], full

    def run(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        ok_codes: tuple[int, ...] = (0,),
    ) -> bytes:
        """Run `git args`, return stdout; any exit code outside `ok_codes` raises WorkspaceError."""
        return self.run_full(*args, index=index, stdin=stdin, ok_codes=ok_codes).stdout

    def run_full(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        ok_codes: tuple[int, ...] = (0,),
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Like `run`, but return the whole result (stderr included); `env` adds variables."""
        argv, full_env = self._command(args, index, env)
        result = deadline.run(argv, cwd=self.root, env=full_env, input=stdin)
        if result.returncode not in ok_codes:
            message = result.stderr.decode("utf-8", "replace").strip()
            raise WorkspaceError(f"`git {args[0]}` failed in {self.root}: {message}")
        return result

    def attempt(self, *args: str, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[bytes]:
        """Run `git args` whatever its exit code: the caller reads `returncode` and stderr."""
        return self.run_full(*args, env=env, ok_codes=tuple(range(256)))

    def spawn(
        self, *args: str, index: Path | None = None, env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start `git args` without waiting (read its output with `collect`)."""
        argv, env = self._command(args, index, env)
        return deadline.popen(
            argv, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )

    def collect(
        self, process: subprocess.Popen[bytes], ok_codes: tuple[int, ...] = (0,),
    ) -> bytes:
        """Wait for a `spawn`ed git; its stdout, or WorkspaceError when it failed (exit code
        outside `ok_codes`; `process.returncode` tells which)."""
        with deadline.watched(process, self.root):
            out, err = process.communicate()
        if process.returncode not in ok_codes:
            message = err.decode("utf-8", "replace").strip()
            argv = process.args
            last = argv[-1] if isinstance(argv, list | tuple) else argv
            raise WorkspaceError(f"`git {os.fsdecode(str(last))}` failed in {self.root}: "
                                 f"{message}")
        return out

    def cat_blobs(self, ids: list[str]) -> Iterator[bytes]:
        """The contents of blobs `ids`, in order, streamed from one `git cat-file --batch`,
        each checked against its id."""
        process = deadline.popen(
            self.argv("cat-file", "--batch"), cwd=self.root, env=self._env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None and process.stdout is not None
        request = "".join(f"{i}\n" for i in ids).encode()
        feeder = threading.Thread(target=_feed, args=(process.stdin, request), daemon=True)
        feeder.start()
        try:
            with deadline.watched(process, self.root):
                for object_id in ids:
                    header = process.stdout.readline().split()
                    if len(header) != 3 or header[1] != b"blob":
                        raise WorkspaceError(f"git has no blob {object_id} in {self.root}")
                    data = process.stdout.read(int(header[2]))
                    process.stdout.read(1)
                    digest = hashlib.new("sha1" if len(object_id) == 40 else "sha256",
                                         b"blob %d\0" % len(data))
                    digest.update(data)
                    if digest.hexdigest() != object_id:
                        raise WorkspaceError(f"blob {object_id} in {self.root} does not hash to "
                                             "its id (rewritten outside git's commands): not used")
                    yield data
        finally:
            stop(process)
            feeder.join()

    def object_sizes(self, ids: list[str]) -> dict[str, int]:
        """id -> size of each of `ids` the repository has, from one `cat-file --batch-check`
        kept running between calls."""
        return self._sizes.sizes(ids)

    def diff_pair(self, config: tuple[str, ...], args: tuple[str, ...], old: str, new: str) -> bytes:
        """What `git <config> diff-tree <args> <old> <new>` writes, from one `diff-tree
        --stdin` kept running between calls (one git process per call where that fails)."""
        out = self._pairs.ask(config, args, old, new)
        return out if out is not None else self.run(*config, "diff-tree", *args, old, new)

    def close(self) -> None:
        """Stop the git processes kept running (started again when needed)."""
        self._sizes.close()
        self._pairs.close()

    def line(self, *args: str, index: Path | None = None) -> str:
        """Run git and return its first output line, stripped."""
        return self.run(*args, index=index).decode("utf-8", "replace").strip()

    def exit_code(self, *args: str) -> tuple[int, str]:
        """Run git for its exit code (no raising but at the deadline) and stripped stdout."""
        result = deadline.run(self.argv(*args), cwd=self.root, env=self._env,
                              stderr=subprocess.DEVNULL)
        return result.returncode, result.stdout.decode("utf-8", "replace").strip()
