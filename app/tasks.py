"""`navtui tasks REPO [-o FILE]`: SWE-bench-shaped tasks from the repository's own history
(`agent_core.tasks`). The tasks go to FILE (JSON Lines) or stdout; each candidate's fate goes
to stderr; the summary (candidates, tasks, dropped per reason, sources) is one JSON line, on
stdout after FILE is written, else on stderr. Exit 0, or 1 when REPO or the sandbox is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from agent_core.sanitize import visible

if TYPE_CHECKING:
    from app.args import Parser


def add_tasks_args(parser: Parser) -> None:
    from app.args import add_sandbox_args, positive_float, positive_int

    parser.add_argument("repo", metavar="REPO", help="the git repository whose history to read")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the tasks here (JSON Lines) instead of stdout")
    parser.add_argument("--test-cmd", metavar="CMD",
                        help="the command that runs the tests (default: detected: pytest, "
                             "unittest, npm test, go test, cargo test)")
    parser.add_argument("--max-commits", type=positive_int, default=200, metavar="N",
                        help="read HEAD's last N commits (default 200)")
    parser.add_argument("--test-timeout", type=positive_float, default=600.0, metavar="S",
                        help="seconds one test run may take (default 600)")
    add_sandbox_args(parser)


def tasks_main(args: argparse.Namespace) -> int:
    """Find the tasks, check each by running its tests, write the ones whose tests flip."""
    from agent_core.executor.sandbox import SandboxError
    from agent_core.git import WorkspaceError
    from agent_core.tasks import Task, CheckRunner, find_tasks
    from agent_core.tasks.mine import Candidate
    from agent_core.trajectory import TrajectoryError
    from app.compose import sandbox_settings

    repo = Path(args.repo)
    if not (repo / ".git").exists():
        return _error(f"{repo} is not a git repository: pass the repository whose history to read")
    try:
        sandbox = sandbox_settings(args)
    except SandboxError as error:
        return _error(str(error))

    def said(candidate: Candidate, outcome: Task | str) -> None:
        if isinstance(outcome, Task):
            line = f"task     {outcome.instance_id}: {len(outcome.FAIL_TO_PASS)} FAIL_TO_PASS"
        else:
            line = f"dropped  {candidate.instance_id}: {outcome}"
        print(visible(line), file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="navtui-tasks-") as work:
        checks = CheckRunner(Path(work), sandbox, args.test_timeout)
        try:
            mined = find_tasks(repo, checks, test_cmd=args.test_cmd, limit=args.max_commits,
                               on_candidate=said)
        except (WorkspaceError, TrajectoryError, SandboxError) as error:
            return _error(str(error))
    text = "".join(json.dumps(task.to_json(), ensure_ascii=False) + "\n" for task in mined.tasks)
    summary = json.dumps(mined.summary())
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(summary)
    else:
        sys.stdout.write(text)
        print(summary, file=sys.stderr)
    return 0


def _error(message: str) -> int:
    print(f"navtui: {visible(message)}", file=sys.stderr)
    return 1
