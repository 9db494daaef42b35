"""`navtui sessions`, `export`, `batch`, `config` and `doctor`: arguments and entry points.

`app.commands.SUBCOMMANDS` names them: each subcommand's parser is built by its `add_*_args`
function (parsed by `parse_*_args` where that exists) and run by its `*_main` function, which
returns the process exit code (0 ok, 1 error). Batch's flags live in `app.args` beside the
groups they share (the config file checks them without loading this module); the batch row
finds `add_batch_args` here.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agent_core.backends.base import Backend, BackendError
from agent_core.batch import (
    Batch,
    BatchError,
    BatchOptions,
    Instance,
    InstanceResult,
    SharedBackend,
    load_instances,
)
from agent_core.batch_repos import RepoFinder
from agent_core.batch_select import SelectionError, select
from agent_core.exports import FORMATS, ExportError, export, to_jsonl
from agent_core.sanitize import json_safe, visible
from agent_core.trajectory import (
    SessionSummary, TrajectoryError, find_trajectory, list_sessions, read_trajectory,
)
from app.args import Parser, add_batch_args, batch_parser, build_parser
from app.progress_line import ProgressLine
from app.where import last_session


STATUS_STYLES = {"submitted": "green", "skipped": "dim", "error": "red",
                 "server_unavailable": "red"}


def _error(message: str) -> int:
    print(f"navtui: {message}", file=sys.stderr)
    return 1


def _missing_repo(repo: Path) -> str | None:
    """Why `repo` cannot be the repository navtui ran on, when it is not even a directory."""
    if not repo.exists():
        return f"{repo} does not exist: pass the path of the repository navtui ran on"
    if not repo.is_dir():
        return f"{repo} is not a directory: pass the path of the repository navtui ran on"
    return None


# --- sessions ---------------------------------------------------------------------------------


def add_sessions_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("repo", metavar="REPO", nargs="?", default=".",
                        help="the repository navtui ran on (default: the current directory)")
    parser.add_argument("--json", action="store_true", help="one JSON object per session")


def sessions_main(args: argparse.Namespace) -> int:
    """List the sessions logged for a repository, oldest first."""
    if problem := _missing_repo(Path(args.repo)):
        return _error(problem)
    try:
        sessions = list_sessions(Path(args.repo))
    except TrajectoryError as error:
        return _error(str(error))
    if args.json:
        for s in sessions:
            print(json.dumps({
                "id": s.id,
                "started": s.started.isoformat() if s.started else None,
                "issue": s.issue,
                "steps": s.steps,
                "status": s.status,
                "resumable": s.resumable,
                "path": str(s.path),
                **{k: s.decisions.get(k, 0) for k in ("approved", "rejected", "edited")},
                "parent": s.parent,
                "forked_at": s.forked_at,
            }))
        return 0
    if not sessions:
        print(f"No navtui sessions in {args.repo}.")
        return 0
    rows = [("id", "started", "steps", "status", "approved/rejected/edited", "issue")] + [
        (_fork_label(s, depth), s.started.strftime("%Y-%m-%d %H:%M") if s.started else "?",
         str(s.steps), s.status,
         "/".join(str(s.decisions.get(k, 0)) for k in ("approved", "rejected", "edited")),
         visible(s.issue))
        for depth, s in forks_under_parents(sessions)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    room = shutil.get_terminal_size((200, 24)).columns if sys.stdout.isatty() else None
    for row in rows:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[5]
        print(line if room is None or len(line) <= room else line[: room - 1] + "…")
    resumable = [s for s in sessions if s.resumable]
    if resumable:
        print(f"Resume one with: navtui --resume {shlex.quote(resumable[-1].id)} "
              f"{shlex.quote(str(args.repo))}")
    return 0


def forks_under_parents(sessions: list[SessionSummary]) -> list[tuple[int, SessionSummary]]:
    """(depth, session) in list order, each fork right under the session it was forked from
    (depth 0: not a fork, or its parent is not listed)."""
    ids = {s.id for s in sessions}
    children: dict[str, list[SessionSummary]] = {}
    for s in sessions:
        if s.parent in ids and s.parent != s.id:
            children.setdefault(s.parent, []).append(s)
    ordered: list[tuple[int, SessionSummary]] = []
    seen: set[str] = set()

    def walk(session: SessionSummary, depth: int) -> None:
        if session.id in seen:
            return
        seen.add(session.id)
        ordered.append((depth, session))
        for child in children.get(session.id, []):
            walk(child, depth + 1)

    for s in sessions:
        if not (s.parent in ids and s.parent != s.id):
            walk(s, 0)
    for s in sessions:  # (parents that name each other: none is a root)
        walk(s, 0)
    return ordered


def _fork_label(session: SessionSummary, depth: int) -> str:
    """The id column: a fork indented under its parent, with the step it was forked at."""
    if depth == 0:
        return session.id
    return "  " * (depth - 1) + f"└ {session.id} (fork at {session.forked_at})"


# --- export -----------------------------------------------------------------------------------


def add_export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="ID|last",
                        help="session id (a unique prefix is enough), `last` (the repository's "
                             "newest) or a path to its .jsonl log")
    parser.add_argument("--format", "-f", required=True, choices=FORMATS, dest="format",
                        help="replay: a script for --backend replay; sft-toolcall / sft-text: "
                             "training data in each dialect's shape; swebench: a prediction; "
                             "sft / dpo / kto: training rows with the exact prompts the model read")
    parser.add_argument("--repo", default=".",
                        help="the repository the session ran on (default: .)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    parser.add_argument("--tokenizer", metavar="MODEL",
                        help="sft / dpo / kto: render chat prompts with this model's tokenizer "
                             "(default: the one the session's log names)")


def parse_export_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The contract is `navtui export ID --format F [REPO]`: REPO may also come last."""
    parser.add_argument("repo_path", metavar="REPO", nargs="?", help="same as --repo")
    args = parser.parse_intermixed_args(argv)
    if args.repo_path:
        args.repo = args.repo_path
    return args


def export_main(args: argparse.Namespace) -> int:
    """Write one session in another tool's format (see `agent_core.exports`)."""
    repo = Path(args.repo)
    direct = Path(args.session).suffix == ".jsonl" and Path(args.session).is_file()
    if not direct and (problem := _missing_repo(repo)):
        return _error(problem)
    try:
        session = last_session(repo.resolve(), "export") if args.session == "last" else args.session
        path = find_trajectory(repo, session)
        skipped: list[str] = []
        rows = export(read_trajectory(path), args.format, _repo_or_none(repo),
                      tokenizer=args.tokenizer, skipped=skipped)
        # Exact text, but escaped where a terminal or a UTF-8 file could not take it.
        text = json_safe(to_jsonl(rows))
    except (TrajectoryError, ExportError) as error:
        return _error(str(error))
    for reason in skipped:
        print(f"navtui: left out {visible(reason)}", file=sys.stderr)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _repo_or_none(repo: Path) -> Path | None:
    return repo if (repo / ".git").exists() else None


# --- batch ------------------------------------------------------------------------------------


def parse_batch_args(parser: Parser, argv: list[str]) -> argparse.Namespace | int:
    """The command line over the config file's settings (1 when the file is bad)."""
    from app.config import ConfigError, configure

    try:
        configure(parser, argv, also=(build_parser(),))
    except ConfigError as error:
        return _error(str(error))
    return parser.parse_args(argv)


def batch_backends(
    args: argparse.Namespace, shared: SharedBackend | None
) -> Callable[[Instance], Backend]:
    """Each instance's backend: the one shared local model, the instance's replay script, or a
    server backend; all server backends share one busy backoff (a 429 seen by one worker
    slows every one)."""
    from app.compose import backend_config, make_backend
    from agent_core.backends.backoff import ServerBackoff
    from agent_core.backends.factory import create_backend

    busy = ServerBackoff()

    def backend_for(instance: Instance) -> Backend:
        if shared is not None:
            return shared
        if args.script_dir:
            script = Path(args.script_dir) / f"{instance.instance_id}.jsonl"
            return make_backend(argparse.Namespace(**{**vars(args), "script": str(script)}))
        return create_backend(backend_config(args), shared_backoff=busy)

    return backend_for


def batch_main(args: argparse.Namespace) -> int:
    """Run every instance headless in its own checkout; writes predictions + trajectories."""
    from app.compose import (
        backend_config, backend_secrets, backend_spec, make_backend, sandbox_settings, session_config,
    )
    from agent_core.backends.factory import BackendConfig, default_backend, spec_for
    from agent_core.executor.sandbox import SandboxError

    try:
        instances = select(load_instances(args.instances), args.slice, args.shard)
    except (BatchError, SelectionError) as error:
        return _error(str(error))
    if args.workers < 1:
        return _error("--workers must be at least 1")
    if args.ray:
        from app.batch_ray import ray_main

        return ray_main(args, instances)
    if args.script_dir and args.backend is None:  # each instance gets a --script of its own
        args.backend = default_backend(BackendConfig(script=args.script_dir))
    if args.backend and spec_for(args.backend).scripted and not (args.script_dir or args.script):
        return _error(f"--backend {args.backend} needs --script-dir DIR "
                      "(one <instance_id>.jsonl each)")
    try:
        sandbox = sandbox_settings(args)  # decided once: `auto` says why it is off only once
    except SandboxError as error:
        return _error(str(error))
    try:
        config = session_config(args)
        one_model = backend_spec(backend_config(args)).loads_weights
        shared = SharedBackend(make_backend(args)) if one_model else None
    except BackendError as error:
        return _error(str(error))

    options = BatchOptions(
        output_dir=Path(args.output).expanduser().resolve(),  # the user's cwd, not the repo's
        config=config,
        make_backend=batch_backends(args, shared),
        workers=args.workers,
        secrets=tuple(backend_secrets(args)),
        sandbox=sandbox,
        repos=RepoFinder(Path(args.repos_dir).expanduser() if args.repos_dir else None,
                         url=args.repos_url),
    )
    console = Console(stderr=True)
    runner = Batch(options)
    line = ProgressLine(console, runner.progress)

    def report(result: InstanceResult) -> None:
        style = STATUS_STYLES.get(result.status, "yellow")
        line.clear()
        console.print(f"[{style}]{result.status:>16}[/] {escape(visible(result.instance_id))} "
                      f"{escape(visible(result.message))}", highlight=False)
        if args.json:
            print(json.dumps({"event": "result", "instance_id": result.instance_id,
                              "status": result.status, "message": result.message}), flush=True)
            print(json.dumps({"event": "progress", **runner.progress.snapshot()}), flush=True)
        line.draw()

    line.start()
    try:
        results = runner.run(
            instances, on_result=report,
            on_stopping=lambda: console.print(
                "Stopping: running instances quit after their current command…"),
        )
    except KeyboardInterrupt:
        line.stop()
        console.print("Stopped. Re-run the same command to continue where it left off.")
        return 3
    finally:
        line.stop()
        if shared is not None:
            shared.shutdown()
    errors = [r for r in results if r.status == "error"]
    unavailable = [r for r in results if r.status == "server_unavailable"]
    failed = len(errors) + len(unavailable)
    have = sum(1 for r in results if r.status not in ("error", "server_unavailable", "stopped"))
    console.print(
        f"{have} of {len(results)} instances have predictions in "
        f"{options.output_dir / 'predictions.jsonl'}"
        + (f"; {failed} failed (re-run the same command to retry them)" if failed else "")
    )
    return 1 if errors else 2 if unavailable else 0


# --- config -----------------------------------------------------------------------------------


def add_config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("show", "path", "edit"), nargs="?", default="show",
                        help="show: the settings in effect from the file; path: where it is; "
                             "edit: open it in $EDITOR (created with every setting commented)")


def config_main(args: argparse.Namespace) -> int:
    """`navtui config show|path|edit`."""
    from app import config as settings

    parser = build_parser()
    path = settings.config_path()
    if args.action == "path":
        print(path)
        return 0
    try:
        if args.action == "edit":
            settings.edit(parser, path)
        loaded = settings.load_config(parser, path, also=(batch_parser(),))
    except settings.ConfigError as error:
        return _error(str(error))
    if not loaded.exists:
        print(f"No config file at {path}; `navtui config edit` creates one.")
        return 0
    print(f"# {path}")
    print(settings.render(loaded, parser), end="")
    return 0


# --- doctor -----------------------------------------------------------------------------------


def add_doctor_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=2.0, metavar="S",
                        help="seconds to wait for the configured server (default 2)")


def doctor_main(args: argparse.Namespace) -> int:
    """`navtui doctor`: what is installed, cached and reachable; exit 1 when a check fails."""
    from app.doctor import run_checks

    return run_checks(timeout=args.timeout)
