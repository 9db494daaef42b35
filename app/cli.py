"""The `navtui` command line.

    navtui [--auto | --plain] [backend flags] [--issue TEXT | --issue-file FILE] [limits] [REPO]
    navtui SUBCOMMAND ...   (the table in `app.commands`: sessions, export, batch, demo, ...)

REPO defaults to the repository containing the current directory. Every way out of a session
prints `navtui --resume ID REPO`.
Without `--auto`/`--plain` the Textual app opens (a terminal is required). `--auto` approves
every action and prints a transcript (or `--json` event lines); `--plain` asks on stdin.
Exit codes: 0 submitted, 1 error, 2 stopped by a limit / exhausted script / format errors /
stuck model, 3 quit by the user.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from agent_core.backends.base import BackendError, ProgressCallback
from agent_core.backends.factory import describe
from agent_core.events import Event, SessionFinished
from agent_core.executor.sandbox import SandboxError
from agent_core.finish import FinishReason
from agent_core.session import Session
from agent_core.steps import Quit
from agent_core.trajectory import TrajectoryError
from agent_core.user_files import read_user_text
from agent_core.workspace import Workspace, WorkspaceError
from app.args import CliError, Parser, batch_parser, build_parser
from app.commands import SUBCOMMANDS, not_a_subcommand, resume_line
from app.compose import (
    LOGGED_BACKEND_OPTIONS,
    backend_config,
    backend_secrets,
    backend_spec,
    logged_backend,
    make_executor,
    new_session,
    resume,
    prompt_profile,
    resume_log_path,
    with_logged_backend,
)
from app.where import last_session, open_repo


SECRET_FLAG_WARNING = (
    "navtui: warning: {flag} on the command line can be read by every process on this machine "
    "(ps, /proc/PID/cmdline), the model's shell included; set NAVTUI_API_KEY in the environment "
    "instead"
)


def warn_about_secret_flags(argv: list[str]) -> None:
    """A key given as a flag (or inside --base-url) sits in navtui's argv for the whole session,
    and a Python process cannot blank its own /proc/PID/cmdline: say so, and what to use.
    (A key from the config file or the environment is not in argv: no warning.)"""
    from agent_core.backends.credentials import split_credentials

    if any(arg == "--api-key" or arg.startswith("--api-key=") for arg in argv):
        print(SECRET_FLAG_WARNING.format(flag="--api-key"), file=sys.stderr)
    if any(split_credentials(arg)[1] for arg in argv if "://" in arg and "@" in arg):
        print(SECRET_FLAG_WARNING.format(flag="a key in --base-url"), file=sys.stderr)


# --- main ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        warn_about_secret_flags(argv)
        return SUBCOMMANDS[argv[0]].run(argv[1:], Parser)
    if argv and not argv[0].startswith("-") and (mistyped := not_a_subcommand(argv[0])):
        print(f"navtui: {mistyped}", file=sys.stderr)  # before argparse trips on its arguments
        return 1
    from app.config import ConfigError

    try:
        args = parse_args(argv)
    except ConfigError as error:
        print(f"navtui: {error}", file=sys.stderr)
        return 1
    warn_about_secret_flags(argv)
    try:
        return run(args)
    except (CliError, BackendError, WorkspaceError, TrajectoryError, ConfigError,
            SandboxError) as error:
        print(f"navtui: {error}", file=sys.stderr)
        return 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line over the config file's settings; ConfigError when the file is bad."""
    from app.config import config_path, configure

    parser = build_parser()
    # `navtui batch`'s settings are valid in the file too; its parser is built only for a file.
    also = (batch_parser(),) if config_path().exists() else ()
    configure(parser, argv, logged_backend=LOGGED_BACKEND_OPTIONS, also=also)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    """Validate the input cheaply, then build the session and hand it to the chosen front end."""
    mode = "auto" if args.auto else "plain" if args.plain else "tui"
    if (mistyped := not_a_subcommand(args.repo)) is not None:
        raise CliError(mistyped)
    if args.auto and args.plain:
        raise CliError("choose one of --auto (approve everything) and --plain (ask on stdin)")
    if mode == "tui":
        if args.json:
            raise CliError("--json prints events for --auto or --plain; add one of them")
        if not (sys.stdout.isatty() and sys.stdin.isatty()):
            raise CliError(
                "the interactive app needs a terminal, and stdin/stdout are not one here: "
                "add --auto to run headless, or --plain to answer on stdin"
            )
    check_output_paths(args)
    workspace = open_repo(args.repo)
    workspace.check_free()
    if args.resume == "last":
        args.resume = last_session(workspace.root)
    issue = read_issue(args)
    if args.resume is None and mode == "auto" and not issue:
        raise CliError("--auto needs the issue: pass --issue TEXT or --issue-file FILE")
    if args.resume is not None and issue:
        raise CliError("--resume continues the logged issue; drop --issue/--issue-file")
    if args.resume is not None:
        # Before any front end checks the model flags: plain `--resume ID` uses the logged model.
        logged = logged_backend(resume_log_path(args, workspace, args.resume))
        args = with_logged_backend(args, logged)
    if mode == "tui":
        return run_app(args, workspace, issue)
    if mode == "plain" and args.resume is None and not issue:
        issue = ask_issue()
    return run_headless(args, workspace, issue, mode)


def check_output_paths(args: argparse.Namespace) -> None:
    """`--trajectory` and `--patch-out` can be written, checked before the model loads (the
    session would otherwise stop at its first event, or lose its patch at the end); their
    folders are made now, as they would be then."""
    for flag, given in (("--trajectory", args.trajectory), ("--patch-out", args.patch_out)):
        if not given:
            continue
        path = Path(given).expanduser()
        if path.is_dir():
            raise CliError(f"{flag} {given} is a directory; give a file name in it")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = ("a file is in its way" if isinstance(error, (FileExistsError, NotADirectoryError))
                      else error.strerror or error)
            raise CliError(f"{flag} {given}: cannot make its folder {path.parent} ({reason}); "
                           "choose another path") from None


def read_issue(args: argparse.Namespace) -> str | None:
    if args.issue_file:
        path = Path(args.issue_file).expanduser()
        text = read_user_text(path, f"--issue-file {args.issue_file}", CliError)
        if not text.strip():
            raise CliError(f"--issue-file {args.issue_file} is empty; write the issue into it")
        return text
    if args.issue is not None and not args.issue.strip():
        raise CliError("--issue is empty; describe the problem to fix")
    return args.issue


def ask_issue() -> str:
    print("Describe the issue to fix; end with an empty line:", file=sys.stderr)
    lines = []
    for line in sys.stdin:
        if not line.strip():
            break
        lines.append(line.rstrip("\n"))
    if not lines:
        raise CliError("no issue given: pass --issue TEXT or --issue-file FILE")
    return "\n".join(lines)


def run_headless(
    args: argparse.Namespace, workspace: Workspace, issue: str | None, mode: str
) -> int:
    """`--auto` / `--plain`: run to the end, printing a transcript or JSON lines."""
    from agent_core.policy import AskPolicy, AutoPolicy, Policy
    from app.config import load_config
    from app.headless import (
        JsonLines, LoadLines, StdinPrompter, Transcript, TurnMeter, approved_line,
        transcript_console,
    )

    console = transcript_console(stderr=args.json)
    secrets = backend_secrets(args)
    printer = (JsonLines(sys.stdout, secrets=secrets) if args.json
               else Transcript(console, secrets=secrets))
    listeners: list[Callable[[Event], None]] = [printer]
    progress: ProgressCallback | None = None
    if isinstance(printer, JsonLines):
        progress = printer.load_progress
    elif not args.quiet:
        progress = LoadLines(sys.stderr)
        rates = not backend_spec(backend_config(args)).scripted
        listeners.append(TurnMeter(sys.stderr, live=sys.stderr.isatty(), rates=rates))
    if args.resume:
        session = resume(args, workspace, listeners=tuple(listeners), progress=progress)
    else:
        session = new_session(args, workspace, issue, progress=progress, listeners=tuple(listeners))
    if isinstance(printer, Transcript):
        printer.paths = session.executor.path_map
    if mode == "auto":
        policy: Policy = AutoPolicy()
    else:
        ask = StdinPrompter(session.parse_edit, console, lambda text: read_line(text, console.file))
        rules = load_config(build_parser(), also=(batch_parser(),)).rules  # as the app's
        approvals = rules.approvals()
        policy = AskPolicy(ask, approvals, lambda proposal, decision, why: console.print(
            approved_line(proposal, decision, why)))
    finished: SessionFinished | None = None
    try:
        if mode == "plain" and session.finished is not None:  # resumed after its submit
            text = ask_to_continue(console.file)
            if text:
                session.continue_with(text)
        finished = session.run(policy)
    except KeyboardInterrupt:
        session.decide(Quit())
        finished = session.finished
    finally:
        session.close()
        if session.started:
            print(resume_line(session.id, workspace.root), file=sys.stderr)
    return FinishReason(finished.reason if finished else FinishReason.QUIT).exit_code


def ask_to_continue(out: IO[str]) -> str:
    """The message a submitted session goes on with (empty: it stays as it is)."""
    try:
        return read_line("The session submitted its fix. A message for the model to go on with "
                         "(empty: leave it as it is) > ", out).strip()
    except EOFError:
        return ""


def read_line(prompt: str, out: IO[str]) -> str:
    """One line from stdin after writing `prompt` to `out`; EOFError at the end of input."""
    out.write(prompt)
    out.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


def run_app(args: argparse.Namespace, workspace: Workspace, issue: str | None) -> int:
    """The Textual app; the model loads in its worker after the first frame."""
    from agent_core.backends.hf_load import library_logs_to
    from agent_core.trajectory import repo_state_dir
    from app.keymap import app_settings
    from app.tui import LoadRelay, run_tui

    settings = app_settings()  # theme, keymap, allow rules, before the screen opens
    resolved = backend_config(args)  # refuses bad model flags before the screen opens
    prompt_profile(args, resolved)  # ... and a prompt profile file with a mistake
    info = describe(resolved)
    library_logs_to(repo_state_dir(workspace.root) / "library.log")
    executor = make_executor(args, workspace)
    relay = LoadRelay()

    def build(text: str) -> Session:
        return new_session(args, workspace, text, executor, progress=relay)

    def resume_by_id(session_id: str) -> Session:
        chosen = argparse.Namespace(**{**vars(args), "resume": session_id})
        return resume(chosen, workspace, executor=executor, progress=relay)

    if args.resume:
        from agent_core.trajectory import read_trajectory

        logged = read_trajectory(resume_log_path(args, workspace, args.resume))
        return run_tui(lambda _issue: resume_by_id(args.resume), repo=workspace.root,
                       issue=logged.issue, resume=resume_by_id, settings=settings,
                       load_relay=relay, backend_info=info)
    return run_tui(build, repo=workspace.root, issue=issue, resume=resume_by_id, settings=settings,
                   load_relay=relay, backend_info=info)


if __name__ == "__main__":
    sys.exit(main())
