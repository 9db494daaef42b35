"""navtui's checkpoint commits written as git's loose objects without a `git commit-tree`
process: the same bytes commit-tree writes (checked against it in the tests), under the same
name (the hash of the content, SHA-1 or SHA-256 as the tree id is)."""

from __future__ import annotations

import hashlib
import re
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

from agent_core.git.objects.object_files import store_loose
from agent_core.git.process.runner import GitRunner

_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# An identity git writes unchanged (commit-tree trims and drops other characters).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _-]*[A-Za-z0-9]|[A-Za-z0-9]")
_PLAIN_EMAIL = re.compile(r"[A-Za-z0-9._+-]+@[A-Za-z0-9.-]+")
# Where git itself must write the commit: it would read these, navtui does not.
_GIT_DECIDES = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


def commit_tree(git: GitRunner, objects: Path | None, tree: str,
                parents: Sequence[str | None], message: str) -> str:
    """Commit `tree` with `parents` (those set, each once, in order) and `message`: written
    into `objects` where it can be, else (or with no `objects`) by `git commit-tree`."""
    unique = list(dict.fromkeys(p for p in parents if p))
    try:
        written = write_commit(git, objects, tree, unique, message) if objects else None
    except OSError:  # git says what is wrong, if anything still is
        written = None
    if written is not None:
        return written
    args: list[str] = []
    for parent in unique:
        args += ["-p", parent]
    return git.line("commit-tree", "--no-gpg-sign", *args, "-m", message, tree)


def write_commit(
    git: GitRunner, objects: Path, tree: str, parents: Sequence[str], message: str,
    when: tuple[int, int] | None = None,
) -> str | None:
    """The id of the commit of `tree`, `parents` and `message` by the runner's identity at
    `when` ((seconds, offset from UTC in seconds); default now, in local time), written as a
    loose object into `objects`; None when git has to write it (a date or an identity set in
    the environment that git would read its own way, an id of an unknown form)."""
    env = git.base_env
    names = [env.get(f"GIT_{who}_{what}", "") for who in ("AUTHOR", "COMMITTER")
             for what in ("NAME", "EMAIL")]
    if any(key in env for key in _GIT_DECIDES) or not all(
        _PLAIN_NAME.fullmatch(names[i]) and _PLAIN_EMAIL.fullmatch(names[i + 1]) for i in (0, 2)
    ):
        return None
    if not all(_HEX.fullmatch(i) and len(i) == len(tree) for i in (tree, *parents)):
        return None
    if when is None:
        seconds = int(time.time())
        when = (seconds, time.localtime(seconds).tm_gmtoff)
    seconds, offset = when
    sign = "-" if offset < 0 else "+"
    zone = f"{sign}{abs(offset) // 3600:02d}{abs(offset) % 3600 // 60:02d}"
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines.append(f"author {names[0]} <{names[1]}> {seconds} {zone}")
    lines.append(f"committer {names[2]} <{names[3]}> {seconds} {zone}")
    body = "\n".join(lines) + "\n\n" + message + ("" if message.endswith("\n") else "\n")
    content = body.encode("utf-8", "surrogateescape")  # as argv would carry it
    data = b"commit %d\0" % len(content) + content
    digest = (hashlib.sha1 if len(tree) == 40 else hashlib.sha256)(data).hexdigest()
    store_loose(objects, digest, zlib.compress(data, 1))
    return digest
