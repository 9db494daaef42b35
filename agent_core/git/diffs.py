"""Step diffs and logged patches within caps: huge files named (size and blob id) instead of
shown, and the text cut near a total size with a line that says how to see all of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.git.runner import GitRunner
from agent_core.git.treeops import huge_files

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
