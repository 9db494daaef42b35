"""What the user is told about git's side of a session: files checkpoints do not hold, git's own
config and hooks a step changed, the `.git` entries it made in the working tree, and what the
session leaves changed there at the end.

Each function returns the notices' text; the session emits them (as `Notice` events).
"""

from __future__ import annotations

from agent_core.workspace import Workspace, WorkspaceError

__all__ = ["control_left_notices", "outside_notice", "repo_control_notice"]


def outside_notice(workspace: Workspace) -> str | None:
    """The paths newly found outside the checkpoints (undo cannot bring them back), if any."""
    outside = workspace.outside_checkpoints()
    if not outside:
        return None
    return (
        "not in navtui's checkpoints, so undo cannot bring these back: " + "; ".join(outside)
    )


def repo_control_notice(workspace: Workspace, index: int) -> tuple[str | None, list[str]]:
    """What step `index` did to git's own files: the notice (None when nothing) and its lines
    (for the step's card)."""
    changed = workspace.repo_control_changes()
    warnings = workspace.git_warnings()
    made = workspace.made_git.news()
    said = []
    if changed or warnings:
        said.append(
            f"step {index} changed git's own config or hooks: "
            f"{'; '.join(warnings or changed)}. The step's diff shows them and undo puts "
            "back what is not in quarantine; navtui's git calls never run them, but your "
            "own git commands would: check them before you run git here."
        )
    if made:
        said.append(f"step {index} made git's own files in the working tree: {'; '.join(made)}.")
    return (" ".join(said) or None), (warnings or changed) + made


def control_left_notices(workspace: Workspace) -> list[str]:
    """At the end: which of git's own files the session leaves changed (the patch and the finish
    screen show the working tree only), and what it moved to quarantine."""
    try:
        left = workspace.control_changed_since_start()
    except WorkspaceError:
        return []
    notices = []
    if left:
        notices.append(
            f"the session leaves git's own config or hooks changed: {left}. navtui never "
            "runs them; your own git commands would."
        )
    made = sorted(workspace.made_git.made)
    if made:
        notices.append(
            f"the session leaves .git entries the model made in the working tree: "
            f"{', '.join(made)}. They are git's control data, not your files (navtui never "
            "entered them, and your index does not list them): remove them, or undo, before "
            "you run git inside those directories"
        )
    quarantined = workspace.quarantined()
    if quarantined:
        notices.append(
            "files the model planted in git's own dir (they would have run on your next git "
            f"command) are in quarantine: {'; '.join(quarantined)}"
        )
    return notices
