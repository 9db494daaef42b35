"""Git plumbing behind `agent_core.workspace`, and the one door into it.

Everything outside this package (the workspace, the sandbox, exports, batch, the app) imports
what it needs from here; the modules inside are this package's own (tests/test_layering.py
holds every other package to that). Its rooms:

* `process/`: running git (`GitRunner`, the only way navtui runs it: repository-controlled
  execution off, a deadline on every process), the processes navtui keeps, the session lock,
  finding the repository, files the model could have reached read safely;
* `objects/`: one parser per git listing (`records`), objects, packs, commits and refs written
  without git, diffs and patches, the survival store that keeps checkpoints through `git gc`;
* `checkpoints/`: what a checkpoint holds (`SnapshotEngine` / `Snapshot`) and everything it
  keeps: the private index and tree watch, ignored and oversized files, HEAD, modes, the user's
  index, session refs, forks, the branch commit;
* `restore/`: the working tree put back to a checkpoint, every object checked against its id;
* `control_files/`: git's own files and `.git` entries (`ControlFiles`, `ControlGuard`,
  `Quarantine`, `MadeGitEntries`, nested repositories), planted configs judged.
"""

from agent_core.git.checkpoints.branch_commit import BranchError, branch_for, commit_patch_to_branch, slugify
from agent_core.git.objects.commits import commit_tree
from agent_core.git.control_files.control import ControlFiles, split_control_diff
from agent_core.git.objects.diffs import DiffCaps, TreeDiffs
from agent_core.git.errors import UnsafeRestore, WorkspaceError
from agent_core.git.checkpoints.fork import SessionForks
from agent_core.git.control_files.git_entries import DOT_GIT, GitEntry, GitEntryScan
from agent_core.git.control_files.guard import ControlGuard
from agent_core.git.checkpoints.head import HeadState, HeadWatcher, move_head
from agent_core.git.checkpoints.ignored import IgnoredCaps
from agent_core.git.checkpoints.ignored_store import IgnoredStore
from agent_core.git.process.lock import acquire, check_free, release
from agent_core.git.control_files.made_git import MadeGitEntries
from agent_core.git.objects.messages import checkpoint_message, parse_message
from agent_core.git.checkpoints.modes import restore_modes, save_modes
from agent_core.git.control_files.nested import NestedTrees, gitlinks_after
from agent_core.git.objects.patches import write_patch
from agent_core.git.control_files.quarantine import Quarantine
from agent_core.git.checkpoints.rawview import RawView
from agent_core.git.objects.refs import write_ref
from agent_core.git.process.repo import clear_operation_state, find_repo
from agent_core.git.process.runner import SAFE_CONFIG, GitRunner, git_env
from agent_core.git.process.safe_files import append_owned, open_append, read_regular, write_bytes
from agent_core.git.checkpoints.session_refs import (
    REF_ROOT,
    check_session_id,
    delete_refs,
    session_ids,
    session_refs,
)
from agent_core.git.checkpoints.snapshot import Snapshot, SnapshotEngine
from agent_core.git.objects.step_objects import keep_step
from agent_core.git.objects.survival import SurvivalStore, ref_intact
from agent_core.git.restore.treeops import apply_tree
from agent_core.git.checkpoints.user_index import (
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
