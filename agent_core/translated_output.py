"""The output a translated action would have had, for exports in another dialect.

When an export shows a step in a dialect that lacks its action's kind (a text-dialect `edit`
shown as a toolcall `str_replace_editor`, a `search` as a `grep` command), the observation must
be the one the *translated* tool prints, not the original tool's wording. `translated_output`
runs the translated action on a scratch copy of the tree as it was before the step (its
checkpoint, extracted from git into a temporary directory), with the session's path alias, and
returns that observation; the repository itself is not touched.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path

from agent_core.actions import Action
from agent_core.executor import Executor
from agent_core.git import GitRunner
from agent_core.steps import Observation


class TreeUnavailable(Exception):
    """The checkpoint's tree could not be read from the repository."""


def _extract(repo: Path, commit: str, into: Path) -> None:
    result = GitRunner(repo).attempt("archive", "--format=tar", commit)
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise TreeUnavailable(f"git archive {commit} failed in {repo}: {message}")
    with tarfile.open(fileobj=io.BytesIO(result.stdout)) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(into, filter="data")
        else:  # Python before 3.11.4 has no extraction filters
            for member in archive.getmembers():
                _check_inside(into, member)
                archive.extract(member, into)


def _check_inside(into: Path, member: tarfile.TarInfo) -> None:
    """Refuse a member that would land, or link, outside `into` (what the "data" filter
    refuses), checked against what is already extracted, links included."""
    root = os.path.realpath(into)
    where = os.path.realpath(os.path.join(root, member.name))
    inside = [where]
    if member.issym():
        inside.append(os.path.realpath(os.path.join(os.path.dirname(where), member.linkname)))
    elif member.islnk():
        inside.append(os.path.realpath(os.path.join(root, member.linkname)))
    elif not (member.isfile() or member.isdir()):
        raise TreeUnavailable(f"the checkpoint's tree holds {member.name!r}, not a file")
    for path in inside:
        if os.path.commonpath([root, path]) != root:
            raise TreeUnavailable(f"the checkpoint's tree leads outside it: {member.name!r}")


def translated_output(
    repo: Path, before: str, action: Action, *, path_alias: str, timeout: float = 60.0
) -> Observation:
    """What `action` prints when run on the tree of checkpoint `before`."""
    with tempfile.TemporaryDirectory(prefix="navtui-export-") as scratch:
        root = Path(scratch) / "tree"
        root.mkdir()
        _extract(repo, before, root)
        executor = Executor(root, command_timeout=timeout, path_alias=path_alias)
        try:
            return executor.execute(action)
        finally:
            executor.close()
