"""Step diffs and logged patches within caps: huge files named (size and blob id) instead of
shown, and the text cut near a total size with a line that says how to see all of it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.git.objects.raw_patch import RAW_PATCH_ARGS, RawPatch, parse_raw_patch
from agent_core.git.process.runner import GitRunner
from agent_core.git.restore.treeops import BlobChange, huge_files, raw_changes

PATCH_ARGS = ("-p", "-M", "--no-color", "--no-ext-diff", "--no-textconv")
_MAX_EXCLUDES = 500


@dataclass(frozen=True)
class DiffCaps:
    """What goes into a step diff or logged patch: files over `file_bytes` are named (size and
    blob id) instead of shown, and the text stops at about `total_bytes`."""

    file_bytes: int = 256_000
    total_bytes: int = 1_000_000


def bounded_diff(
    git: GitRunner, raw: bytes, old: str, new: str, caps: DiffCaps, *, binary: bool = False,
    exclude: Sequence[str] = (),
) -> tuple[str, bool]:
    """The diff from tree `old` to `new` (`raw`: their `diff-tree --raw -z`) within `caps`,
    without the paths in `exclude`; True when nothing else was left out."""
    left_out = set(exclude)
    big = [c for c in huge_files(git, raw, caps.file_bytes) if c.path not in left_out]
    extra = ["--binary"] if binary else []
    if len(big) <= _MAX_EXCLUDES:
        paths = [*(change.path for change in big), *exclude]
        excludes = [f":(exclude,literal){path}" for path in paths]
        out = git.run("diff-tree", *PATCH_ARGS, *extra, old, new, "--", *excludes)
        text = out.decode("utf-8", "surrogateescape" if binary else "replace")
    else:
        text = ""
        big = [c for c in huge_files(git, raw, -1) if c.path not in left_out]
    return _within(text, big, old, new, caps)


def _within(
    text: str, big: list[BlobChange], old: str, new: str, caps: DiffCaps,
) -> tuple[str, bool]:
    """`text` cut near `caps.total_bytes`, with the files in `big` named after it; True when
    nothing was left out."""
    complete = not big
    if len(text) > caps.total_bytes:
        cut = text.rfind("\ndiff --git ", 0, caps.total_bytes) + 1
        rest = text[cut:]
        more = rest.count("diff --git ") if rest.startswith("diff --git ") else 1
        text = text[:cut] + (
            f"# navtui: {more} more file(s) not shown ({len(rest)} characters of diff); "
            f"`git diff-tree -p {old} {new}` shows everything\n"
        )
        complete = False
    return text + "".join(change.summary() for change in big), complete


class TreeDiffs:
    """Diffs between two tree ids; the last pair's `diff-tree --raw` is kept (a checkpoint
    reads it for submodules, then its step diff for sizes), and after `step` its patch too,
    from the same git process."""

    def __init__(self, git: GitRunner) -> None:
        self._git = git
        self._raw_cache: tuple[str, str, bytes] = ("", "", b"")
        self._step: tuple[str, str, DiffCaps, RawPatch] | None = None

    def raw(self, old: str, new: str) -> bytes:
        """`diff-tree --raw -z` from `old` to `new`."""
        if self._raw_cache[:2] != (old, new):
            self._raw_cache = (old, new, raw_changes(self._git, old, new))
        return self._raw_cache[2]

    def step(self, old: str, new: str, caps: DiffCaps) -> bytes:
        """`raw(old, new)`, from one `diff-tree --raw -p` (of the session's long-lived one:
        `GitRunner.diff_pair`) whose patch is kept for the next
        `bounded(old, new, caps)` (and its new trees: `last_step`). Files over
        `caps.file_bytes` are not diffed (git takes them as binary: `core.bigFileThreshold`),
        as `bounded` leaves them out anyway."""
        out = self._git.diff_pair(("-c", f"core.bigFileThreshold={max(1, caps.file_bytes)}"),
                                  (*RAW_PATCH_ARGS, *PATCH_ARGS), old, new)
        parsed = parse_raw_patch(out)
        if parsed is None:  # its parts did not line up: git is asked again
            return self.raw(old, new)
        self._raw_cache = (old, new, parsed.raw)
        self._step = (old, new, caps, parsed)
        return parsed.raw

    def last_step(self, old: str, new: str) -> RawPatch | None:
        """What the last `step` read, if it was from `old` to `new`."""
        return self._step[3] if self._step is not None and self._step[:2] == (old, new) else None

    def bounded(self, old: str, new: str, caps: DiffCaps, *, binary: bool = False,
                exclude: Sequence[str] = ()) -> tuple[str, bool]:
        """The diff from `old` to `new` within `caps`, without the paths in `exclude`; True
        when nothing else was left out."""
        if old == new:
            return "", True
        if self._step is not None and self._step[:3] == (old, new, caps) and not binary \
                and not exclude:
            done = self._from_step(self._step[3], old, new, caps)
            if done is not None:
                return done
        return bounded_diff(self._git, self.raw(old, new), old, new, caps, binary=binary,
                            exclude=exclude)

    def _from_step(self, parsed: RawPatch, old: str, new: str,
                   caps: DiffCaps) -> tuple[str, bool] | None:
        """`bounded` from the patch `step` kept: the sections of files over the size cap
        dropped (None where one was part of a rename, or too many are)."""
        big = huge_files(self._git, parsed.raw, caps.file_bytes)
        if len(big) > _MAX_EXCLUDES:
            return None
        paths = {change.path for change in big}
        if paths & parsed.renamed:
            return None
        kept = b"".join(chunk for names, chunk in parsed.sections if not paths & set(names))
        return _within(kept.decode("utf-8", "replace"), big, old, new, caps)

    def changed_files(self, old: str, new: str) -> list[str]:
        """Paths that differ between `old` and `new`; renames list both ends."""
        if old == new:
            return []
        out = self._git.run("diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new)
        return [os.fsdecode(p) for p in out.split(b"\0") if p]

    def patch(self, old: str, new: str, exclude: Sequence[str] = ()) -> str:
        """The whole binary patch from `old` to `new` without the paths in `exclude`, bytes
        that are not UTF-8 kept as surrogate escapes."""
        if old == new:
            return ""
        excludes = [f":(exclude,literal){path}" for path in exclude]
        out = self._git.run("diff-tree", *PATCH_ARGS, "--binary", old, new, "--", *excludes)
        return out.decode("utf-8", "surrogateescape")
