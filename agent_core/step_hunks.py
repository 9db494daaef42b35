"""Per-hunk review of a step that ran: its diff's hunks, and the ones the user drops put back.

`step_hunks(diff)` reads a step's `git diff` (text files; binary, quoted or mode-only entries are
not offered) into `StepHunk`s, each one run of changed lines with the unchanged lines git showed
around it. `revert_hunks` writes the dropped ones back as they were before the step, through the
file tools' confinement (no symlink followed); the session then keeps that as a checkpoint of
the user's own (`Session.keep_user_edits`, undoable with `u`) and `revert_note` tells the model.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_core.executor.paths import Confinement
from agent_core.hunks import Hunk, Region, split_hunks

if TYPE_CHECKING:
    from agent_core.session import Session

_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class StepHunk:
    """One hunk of a step's diff: `hunk` in the file `path` (repository-relative), its new lines
    starting at line index `new_at` of the file the step left (0-based)."""

    path: str
    hunk: Hunk
    new_at: int
    created: bool = False  # the step made the file
    deleted: bool = False  # the step removed it


@dataclass
class _File:
    path: str = ""
    created: bool = False
    deleted: bool = False
    plain: bool = True  # no quoted path, not binary


def _git_hunk(path: str, body: list[str], old_start: int, new_start: int, entry: _File) -> list[StepHunk]:
    """The runs of changed lines of one `@@` hunk, each a StepHunk."""
    old = "".join(line[1:] + "\n" for line in body if line[:1] in (" ", "-"))
    new = "".join(line[1:] + "\n" for line in body if line[:1] in (" ", "+"))
    first = max(old_start, 1)
    found = []
    for hunk in split_hunks(Region(path, old, new, first)):
        new_at = max(new_start, 1) - 1 + (hunk.new_line - first)
        found.append(StepHunk(path, hunk, new_at, entry.created, entry.deleted))
    return found


def step_hunks(diff: str) -> list[StepHunk]:
    """The hunks of a step's diff, numbered from 1 in order over all its files."""
    found: list[StepHunk] = []
    entry = _File()
    body: list[str] = []
    starts = (0, 0)

    def flush() -> None:
        if body and entry.plain and entry.path:
            found.extend(_git_hunk(entry.path, body, *starts, entry))
        body.clear()

    for line in diff.splitlines():
        if line.startswith("diff --git "):
            flush()
            entry = _File(plain='"' not in line)
        elif line.startswith("--- ") and not body:
            entry.created = line == "--- /dev/null"
            if not entry.created:
                entry.path = line[6:] if line.startswith("--- a/") else ""
        elif line.startswith("+++ ") and not body:
            entry.deleted = line == "+++ /dev/null"
            if not entry.deleted:
                entry.path = line[6:] if line.startswith("+++ b/") else ""
        elif line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            entry.plain = False
        elif match := _HEADER.match(line):
            flush()
            starts = (int(match.group(1)), int(match.group(3)))
        elif starts != (0, 0) and line[:1] in (" ", "-", "+"):
            body.append(line)
        elif line.startswith("\\"):  # "\ No newline at end of file": not offered
            entry.plain = False
    flush()
    return [dataclasses.replace(h, hunk=dataclasses.replace(h.hunk, number=n))
            for n, h in enumerate(found, start=1)]


class RevertError(Exception):
    """A hunk cannot be put back: its file changed since the step (the message names it)."""


def _read(paths: Confinement, path: str) -> str | None:
    real = paths.resolve(path)
    try:
        fd = paths.open(real, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RevertError(f"{path} is not a regular file")
        return handle.read().decode("utf-8")


def _write(paths: Confinement, path: str, text: str | None) -> None:
    real = paths.resolve(path)
    if text is None:
        paths.unlink(real)
        return
    fd = paths.open(real, os.O_WRONLY | os.O_NONBLOCK | os.O_CREAT | os.O_TRUNC, 0o666,
                    make_parents=True)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))


def revert_hunks(paths: Confinement, hunks: Sequence[StepHunk]) -> list[str]:
    """Put `hunks` back as they were before their step, in the working tree; returns the files
    changed. RevertError (nothing written) when a file no longer holds a hunk's new lines."""
    by_path: dict[str, list[StepHunk]] = {}
    for step_hunk in hunks:
        by_path.setdefault(step_hunk.path, []).append(step_hunk)
    texts: dict[str, str | None] = {}
    for path, chosen in by_path.items():
        current = _read(paths, path)
        lines = (current or "").splitlines(keepends=True)
        for step_hunk in sorted(chosen, key=lambda h: h.new_at, reverse=True):
            hunk, at = step_hunk.hunk, step_hunk.new_at
            if [line.rstrip("\r\n") for line in lines[at:at + len(hunk.new)]] != [
                    line.rstrip("\r\n") for line in hunk.new]:
                raise RevertError(f"{path} changed since the step: hunk {hunk.number} "
                                  f"({hunk.where}) is not there as the step left it")
            lines[at:at + len(hunk.new)] = list(hunk.old)
        left = "".join(lines)
        texts[path] = None if chosen[0].created and not left else left  # (a file the step made)
    for path, written in texts.items():
        _write(paths, path, written)
    return sorted(texts)


def revert_note(step: int, reverted: Sequence[StepHunk], total: int) -> str:
    """What the model reads: which hunks of step `step`'s changes the user put back."""
    names = [f"{h.path} {h.hunk.where}" for h in reverted]
    return (f"(The user reviewed the changes of step {step} hunk by hunk and reverted "
            f"{len(reverted)} of its {total} hunks; these lines are as they were before that "
            f"step: {'; '.join(names)}.)")


def revert_in_session(session: Session, step: int, chosen: Sequence[StepHunk], total: int) -> list[str]:
    """Put `chosen` (hunks of step `step`'s diff, of `total`) back in `session`'s repository as a
    checkpoint of the user's own, and tell the model; returns the files changed (run it on the
    session's thread)."""
    changed = revert_hunks(session.executor.files.paths, chosen)
    session.keep_user_edits()
    session.add_user_message(revert_note(step, chosen, total))
    return changed
