"""What the session's patch holds: the session's work, not everything that changed meanwhile.

Left out, and named in `PatchScope.notices`:
* files only the user changed, in the edits kept as a checkpoint of their own while a proposal
  waited (records of status `StepStatus.USER_EDITS`): they stay in the working tree, not in the patch;
* Python bytecode (`__pycache__/`, `*.pyc`) the model's `python` runs wrote where no ignore rule
  covers it (covered files never reach a checkpoint), unless `keep_pycache`.
A file the user edited that a later step changed again stays in, whole, and is named.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from agent_core.steps import StepRecord

# `diff --git a/X b/Y` of plain paths (a quoted path git writes for odd names is not matched:
# such a file is then not known as the model's, and a user edit to it is left out).
_DIFF_HEADER = re.compile(r"^diff -{2}git a/(.+) b/(.+)$", re.MULTILINE)


@dataclass
class PatchScope:
    exclude: list[str] = field(default_factory=list)  # paths (literal) the patch leaves out
    notices: list[str] = field(default_factory=list)  # what was left out or kept, and why


def is_bytecode(path: str) -> bool:
    return "__pycache__" in PurePosixPath(path).parts or path.endswith((".pyc", ".pyo"))


def _paths_in(diff: str) -> set[str]:
    return {name for pair in _DIFF_HEADER.findall(diff) for name in pair}


def patch_scope(records: Iterable[StepRecord], changed: Iterable[str], *,
                keep_pycache: bool = False) -> PatchScope:
    """The scope of the patch of a session whose executed steps are `records`, `changed` being
    the paths that differ between checkpoint 0 and the end."""
    user: list[str] = []
    worked: set[str] = set()
    for record in records:
        if record.checkpoint is None:
            continue
        if record.user_edits is not None:
            user += [p for p in record.user_edits if not p.startswith((".git/", "HEAD"))]
        else:
            worked |= _paths_in(record.diff)
    changed = list(changed)
    yours = [p for p in changed if p in set(user) and p not in worked]
    mixed = sorted({p for p in changed if p in set(user) and p in worked})
    bytecode = [] if keep_pycache else [p for p in changed if is_bytecode(p) and p not in yours]
    scope = PatchScope(exclude=[*yours, *bytecode])
    if yours:
        scope.notices.append(f"your edits: {_names(yours)} — in the working tree, not in the patch")
    if mixed:
        scope.notices.append(f"your edits to {_names(mixed)} are in the patch: a later step "
                             "changed the same file")
    if bytecode:
        scope.notices.append(
            f"left out of the patch: {len(bytecode)} Python bytecode file(s) (__pycache__/, *.pyc) "
            "that no ignore rule covers; keep_pycache = true in the config file keeps them"
        )
    return scope


def _names(paths: list[str], most: int = 10) -> str:
    shown = ", ".join(paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")
