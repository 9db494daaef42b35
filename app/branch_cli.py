"""`navtui rewind ID --to N [REPO]` and `navtui fork ID --at N [REPO]`: go back to a step of a
logged session, or start a new one from it, without opening it (agent_core/session_branch.py).
Each prints the command that continues the session, quoted for the shell."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from agent_core.git import UnsafeRestore, WorkspaceError
from agent_core.sanitize import visible
from agent_core.session_branch import fork_session, rewind_session
from agent_core.trajectory import TrajectoryError
from app.where import last_session


def _add_common(parser: argparse.ArgumentParser, flag: str, what: str) -> None:
    parser.add_argument("session", metavar="ID|last",
                        help="session id (a unique prefix is enough) or `last` (the newest)")
    parser.add_argument(flag, dest="step", type=int, required=True, metavar="N", help=what)
    parser.add_argument("repo", metavar="REPO", nargs="?", default=".",
                        help="the repository navtui ran on (default: the current directory)")


def add_rewind_args(parser: argparse.ArgumentParser) -> None:
    _add_common(parser, "--to", "the step to go back to (0: the start); later steps are undone")
    parser.add_argument("--force", action="store_true",
                        help="rewind even over files changed since the session's last checkpoint "
                             "(they are kept in a before-undo ref first)")


def parse_rewind_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """REPO may come before or after `--to N`."""
    return parser.parse_intermixed_args(argv)


def add_fork_args(parser: argparse.ArgumentParser) -> None:
    _add_common(parser, "--at", "the last step the new session shares (0: only the start)")


def parse_fork_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """REPO may come before or after `--at N`."""
    return parser.parse_intermixed_args(argv)


def _continue_line(session_id: str, repo: Path, *extra: str) -> str:
    return "Continue it with: " + shlex.join(["navtui", "--resume", session_id, *extra, str(repo)])


def _error(message: str) -> int:
    print(f"navtui: {visible(message)}", file=sys.stderr)
    return 1


def rewind_main(args: argparse.Namespace) -> int:
    """Files and conversation of a logged session back to step `--to`, as `w` does."""
    repo = Path(args.repo)
    try:
        session = last_session(repo.resolve(), "rewind") if args.session == "last" else args.session
        done = rewind_session(repo, session, args.step, force=args.force)
    except UnsafeRestore as refused:
        return _error(f"{refused}\nRewind anyway with --force.")
    except (TrajectoryError, WorkspaceError) as error:
        return _error(str(error))
    for notice in done.notices:
        print(visible(notice))
    changed = ", ".join(done.changed_paths) or "no file changed"
    print(f"Session {done.session_id} is back at step {done.to_index}: {visible(changed)}.")
    if done.saved_ref:
        print(f"What was there before is kept: git restore --source={done.saved_ref} -- PATH")
    print(_continue_line(done.session_id, repo))
    return 0


def fork_main(args: argparse.Namespace) -> int:
    """A new session sharing a logged one's history up to step `--at`; the original stays."""
    repo = Path(args.repo)
    try:
        session = last_session(repo.resolve(), "fork") if args.session == "last" else args.session
        made = fork_session(repo, session, args.step)
    except (TrajectoryError, WorkspaceError) as error:
        return _error(str(error))
    print(f"Session {made.session_id} is a fork of {made.parent} at step {made.at_index}; "
          f"{made.parent} stays as it was.")
    # Its files are step N's checkpoint: --force puts them back over the tree as it is now
    # (kept in a before-resume ref first).
    print(_continue_line(made.session_id, repo, "--force"))
    return 0
