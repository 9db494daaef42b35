"""Which repository and which session the command line means: REPO's default (the repository
containing the current directory) and `--resume last`."""

from __future__ import annotations

from pathlib import Path

from agent_core.trajectory import TrajectoryError, iter_sessions
from agent_core.workspace import Workspace, WorkspaceError


def open_repo(repo: str | None) -> Workspace:
    """The repository REPO names, else the one containing the current directory."""
    if repo is not None:
        return Workspace.open(repo)
    here = Path.cwd()
    try:
        return Workspace.open(here)
    except WorkspaceError as error:
        if "not a git repository" not in str(error):
            raise
        raise WorkspaceError(
            f"{here} is not inside a git repository: run `navtui PATH` with your repository's "
            "path, or cd into it first"
        ) from None


def last_session(root: Path, doing: str = "resume") -> str:
    """The id of the newest session logged for the repository at `root` (`--resume last`,
    `navtui export last`); `doing` says what it was wanted for."""
    newest = next(iter_sessions(root, newest_first=True), None)
    if newest is None:
        raise TrajectoryError(f"no navtui session is logged in {root} yet, so there is none to "
                              f"{doing}: start one with `navtui`")
    return newest.id
