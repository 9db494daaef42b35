"""Git plumbing behind `agent_core.workspace`, and the one door into it.

Everything outside this package (the workspace, the sandbox, exports, batch, the app) imports
what it needs from here; the modules inside are this package's own (tests/test_layering.py
holds every other package to that). Their groups:

* running git: `GitRunner` (the only way navtui runs git: repository-controlled execution off,
  a timeout), `git_env`, `SAFE_CONFIG`, `find_repo`, `clear_operation_state`, the session lock;
* objects and refs: checkpoint commits and messages, `write_ref`, session refs, packs and the
  survival store that keeps checkpoints through `git gc`;
* snapshots and diffs: `SnapshotEngine` / `Snapshot`, `TreeDiffs`, `apply_tree`;
* control files: git's own files a step changed (`ControlFiles`, `ControlGuard`, `Quarantine`),
  `.git` entries in the working tree (`GitEntryScan`, `MadeGitEntries`), nested repositories;
* the user's side: their index and HEAD kept and put back, patches, a branch commit;
* files the model could reach, read and written safely (`safe_files`: no link followed, regular
  files only, capped, new files renamed into place).
"""

from agent_core.git.branch_commit import BranchError, branch_for, commit_patch_to_branch, slugify
from agent_core.git.commits import commit_tree
from agent_core.git.control import ControlFiles, split_control_diff
from agent_core.git.diffs import DiffCaps, TreeDiffs
from agent_core.git.errors import UnsafeRestore, WorkspaceError
from agent_core.git.fork import SessionForks
from agent_core.git.git_entries import DOT_GIT, GitEntry, GitEntryScan
from agent_core.git.guard import ControlGuard
from agent_core.git.head import HeadState, HeadWatcher, move_head
from agent_core.git.ignored import IgnoredCaps
from agent_core.git.ignored_store import IgnoredStore
from agent_core.git.lock import acquire, check_free, release
from agent_core.git.made_git import MadeGitEntries
from agent_core.git.messages import checkpoint_message, parse_message
from agent_core.git.modes import restore_modes, save_modes
from agent_core.git.nested import NestedTrees, gitlinks_after
from agent_core.git.patches import write_patch
from agent_core.git.quarantine import Quarantine
from agent_core.git.rawview import RawView
from agent_core.git.refs import write_ref
from agent_core.git.repo import clear_operation_state, find_repo
from agent_core.git.runner import SAFE_CONFIG, GitRunner, git_env
from agent_core.git.safe_files import append_owned, open_append, read_regular, write_bytes
from agent_core.git.session_refs import (
    REF_ROOT,
    check_session_id,
    delete_refs,
    session_ids,
    session_refs,
)
from agent_core.git.snapshot import Snapshot, SnapshotEngine
from agent_core.git.step_objects import keep_step
from agent_core.git.survival import SurvivalStore, ref_intact
from agent_core.git.treeops import apply_tree
from agent_core.git.user_index import (
    clear_user_marks,
    copy_index,
    copy_user_index,
    restore_user_index,
    staged_commit,
)

__all__ = [
    "DOT_GIT", "REF_ROOT", "SAFE_CONFIG", "BranchError", "ControlFiles", "ControlGuard",
    "DiffCaps", "GitEntry", "GitEntryScan", "GitRunner", "HeadState", "HeadWatcher",
    "IgnoredCaps", "IgnoredStore", "MadeGitEntries", "NestedTrees", "Quarantine", "RawView",
    "SessionForks", "Snapshot", "SnapshotEngine", "SurvivalStore", "TreeDiffs", "UnsafeRestore",
    "WorkspaceError",
    "acquire", "append_owned", "apply_tree", "branch_for", "check_free", "check_session_id",
    "checkpoint_message", "clear_operation_state", "clear_user_marks", "commit_patch_to_branch",
    "commit_tree", "copy_index", "copy_user_index", "delete_refs", "find_repo", "git_env",
    "gitlinks_after",
    "keep_step", "move_head", "open_append", "parse_message", "read_regular", "ref_intact",
    "release", "restore_modes",
    "restore_user_index", "save_modes", "session_ids", "session_refs", "slugify",
    "split_control_diff", "staged_commit", "write_bytes", "write_patch", "write_ref",
]
