"""`git add -A` into a private index: of the paths `git status` named, or of the whole tree,
tried again while files vanish under it; a directory holding a `.git` the model made is first
seeded so that git adds it as an ordinary directory."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from agent_core.git.errors import WorkspaceError
from agent_core.git.objects.object_files import store_object
from agent_core.git.process.runner import GitRunner

_VANISHED = ("unable to stat", "No such file or directory", "Not a directory")
_VANISHED_RETRIES = 40
# git's own words, the path unquoted: unable to stat 'src/x': No such file or directory
_VANISHED_PATH = re.compile(r"unable to stat '(.*)': ", re.DOTALL)
# Beyond this many changed paths one whole-tree `git add -A` is cheaper than a pathspec list.
_MAX_PATHSPECS = 200
# The name of the entry `seed_entries` makes in a directory: no file of it is ever there.
SEED = ".navtui-seed-4f1c2a"


def add_changed(
    git: GitRunner, index: Path, paths: list[str] | None, config: tuple[str, ...] = (),
    verbose: bool = False, skip: Sequence[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    """`git add -A` of `paths` (literal pathspecs) into the private index; the whole tree
    (`add_all`) when there are many, when status could not tell, or when one vanished.
    `config`: `-c` settings for git; `verbose`: its output names what it added and removed;
    `skip`: paths left out (files over the size cap: the index keeps what it had)."""
    flags = ("--verbose",) if verbose else ()
    if paths is None or len(paths) > _MAX_PATHSPECS:
        return add_all(git, index, config, flags, skip)
    specs = [os.fsencode(p.rstrip("/")) for p in paths if p.rstrip("/") not in skip]
    if not specs:
        return subprocess.CompletedProcess([], 0, b"", b"")
    if skip:  # (a directory added whole may hold one: literal magic, no literal-only mode)
        specs = [b":(literal)" + spec for spec in specs] + _excluded(skip)
    result = git.run_full(
        *config, "add", "-A", *flags, "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
        index=index, stdin=b"".join(spec + b"\0" for spec in specs),
        ok_codes=(0, 1, 128), env={} if skip else {"GIT_LITERAL_PATHSPECS": "1"},
    )
    return add_all(git, index, config, flags, skip) if result.returncode == 128 else result


def covering_directories(paths: list[str]) -> list[str]:
    """The directories holding `paths` (`.` for the root's entries), none inside another: as
    pathspecs, `git add -A` walks them whole (ignored files skipped, as in a whole-tree add)."""
    parents = {path.rpartition("/")[0] or "." for path in paths}
    if "." in parents:
        return ["."]
    return sorted(parent for parent in parents if not any(
        "/".join(parent.split("/")[:n]) in parents for n in range(1, parent.count("/") + 1)
    ))


def add_all(
    git: GitRunner, index: Path, config: tuple[str, ...] = (), flags: tuple[str, ...] = (),
    skip: Sequence[str] = (),
) -> subprocess.CompletedProcess[bytes]:
    """`git add -A` (and `flags`) into the private index, tried again while files vanish under
    it.

    A watcher or build tool that creates and deletes files makes git die with "unable to
    stat" when a new file it just listed is gone. The next try leaves that path out, so the
    index keeps what it last knew of it (the next checkpoint looks afresh): a tool that
    churns faster than git lists costs one retry per path, not the session.
    """
    vanished: list[str] = []
    error = ""
    for attempt in range(_VANISHED_RETRIES):
        result = git.run_full(
            *config, "add", "-A", *flags, "--ignore-errors", "--pathspec-from-file=-",
            "--pathspec-file-nul", index=index, stdin=_pathspecs_without([*vanished, *skip]),
            ok_codes=(0, 1, 128),
        )
        if result.returncode != 128:
            return result
        error = result.stderr.decode("utf-8", "replace").strip()
        if not any(sign in error for sign in _VANISHED):
            break
        gone = _VANISHED_PATH.search(error)
        if gone and gone.group(1) not in vanished:
            vanished.append(gone.group(1))
        else:
            time.sleep(0.005 * attempt)
    raise WorkspaceError(
        f"could not snapshot {git.root}: {error}. If a tool keeps creating and deleting "
        "files there, pause it (or ignore its files in .gitignore) and try again."
    )


def named_paths(verbose_out: bytes) -> set[bytes]:
    """The paths `git add --verbose` said it added or removed (a name with a newline in it is
    left out: its line does not parse)."""
    named = set()
    for line in verbose_out.split(b"\n"):
        for prefix in (b"add '", b"remove '"):
            if line.startswith(prefix) and line.endswith(b"'"):
                named.add(line[len(prefix):-1])
    return named


def _pathspecs_without(paths: list[str]) -> bytes:
    """NUL-separated pathspecs for the whole tree except `paths` (each taken literally)."""
    return b"".join(spec + b"\0" for spec in [b".", *_excluded(paths)])


def _excluded(paths: Sequence[str]) -> list[bytes]:
    return [b":(exclude,literal)" + os.fsencode(path) for path in paths]


def seed_entries(git: GitRunner, index: Path, directories: Sequence[str]) -> None:
    """Make git take each of `directories` for an ordinary directory of the private `index`,
    not a nested repository (which `git add` records as a gitlink, reading its HEAD): an entry
    under it that names no file (`git status` says it is deleted; the next `add` of it, or of
    the directory, removes it) makes git walk it like any other directory, skipping its `.git`
    as it skips every `.git`."""
    objects = git.object_directory
    raw = git.raw
    object_format = raw.object_format if raw is not None and raw.object_format else "sha1"
    empty = (store_object(objects, object_format, b"blob", b"") if objects is not None
             else git.run("hash-object", "-w", "--stdin", stdin=b"").decode().strip())
    listing = b"".join(f"100644 {empty}\t{directory}/{SEED}".encode("utf-8", "surrogateescape")
                       + b"\0" for directory in directories)
    git.run("update-index", "-z", "--add", "--replace", "--index-info", index=index, stdin=listing)
