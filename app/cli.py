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
from typing import IO, NoReturn

from agent_core import __version__
from agent_core.backends.base import Backend, BackendError, ProgressCallback
from agent_core.backends.factory import BACKENDS, BackendConfig, create_backend, describe, resolve, spec_for
from agent_core.backends.presets import PRESETS
from agent_core.events import Event, SessionFinished
from agent_core.executor import Executor
from agent_core.finish import FinishReason
from agent_core.executor.sandbox import (
    SANDBOX_MODES,
    Launcher,
    SandboxError,
    SandboxSettings,
    resolve_sandbox,
)
from agent_core.git.patches import write_patch
from agent_core.formats import DIALECTS
from agent_core.profiles import PROFILES, ProfileError, load_profile
from agent_core.session import Session, SessionConfig, new_session_id
from agent_core.steps import Quit
from agent_core.trajectory import TrajectoryError
from agent_core.workspace import Workspace, WorkspaceError
from app.commands import SUBCOMMANDS, help_epilog, not_a_subcommand, resume_line
from app.where import last_session, open_repo



DEMO_BACKEND = "demo"  # `navtui demo`'s scripted model, as its sessions log it


class CliError(Exception):
    """Bad input on the command line; the message says what to change."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error exits 1 (2 means "stopped by a limit" for navtui)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


# --- arguments ----------------------------------------------------------------------------


def add_backend_args(parser: argparse.ArgumentParser) -> None:
    """The flags that choose and load the model (shared with `navtui batch`)."""
    group = parser.add_argument_group("model")
    group.add_argument(
        "--backend", choices=BACKENDS,
        help="hf: local transformers; openai: an OpenAI-compatible server; replay: a script "
        "(default: replay with --script, openai with --base-url, else hf)",
    )
    group.add_argument(
        "--model", metavar="NAME|ID|PATH",
        help=f"preset ({', '.join(PRESETS)}), Hugging Face id or local directory; "
        "with --backend openai, the name the server serves",
    )
    group.add_argument("--adapter", metavar="ID|PATH", help="LoRA adapter (overrides a preset's)")
    quant = group.add_mutually_exclusive_group()
    quant.add_argument("--load-in-4bit", action="store_true", help="nf4 weights via bitsandbytes")
    quant.add_argument("--load-in-8bit", action="store_true", help="int8 weights via bitsandbytes")
    group.add_argument(
        "--base-url", metavar="URL", help="OpenAI-compatible server, e.g. http://localhost:8000/v1"
    )
    group.add_argument(
        "--api-key", metavar="KEY",
        help="server API key; better NAVTUI_API_KEY / OPENAI_API_KEY, since a flag is visible "
        "to every process (ps); redacted from logs and transcripts",
    )
    group.add_argument(
        "--script", metavar="FILE", help='replay script: JSON Lines of {"output": ...}'
    )
    group.add_argument(
        "--request-timeout", type=positive_float, metavar="S",
        help="with --backend openai: seconds to wait for each piece of the reply, prefill "
        "included (default 300)",
    )
    group.add_argument(
        "--tokenizer", metavar="ID|PATH",
        help="with --backend openai: tokenizer for exact prompt token counts (default: estimate)",
    )
    group.add_argument(
        "--threads", type=positive_int, metavar="N",
        help="with --backend hf on CPU: torch threads (default: NAVTUI_THREADS, else the number "
        "of physical cores)",
    )
    group.add_argument(
        "--dialect", choices=("auto", *DIALECTS), default="auto",
        help="the model's action format (default: from the preset or model name, "
        "else detected from its first reply)",
    )
    group.add_argument(
        "--prompt-profile", metavar="NAME|FILE",
        help=f"the words the model reads: {', '.join(PROFILES)} or a profile YAML file "
        "(default: the preset's, else the dialect's: swesmith for toolcall/xml, r2e-card for text)",
    )
    group.add_argument(
        "--no-submit-review", action="store_true",
        help="end at the model's first submit (default with a model backend: answer it with the "
        "profile's review message and the diff, as in SWE-smith's training, and end at the next "
        "submit)",
    )


def add_limit_args(parser: argparse.ArgumentParser) -> None:
    """Step, time and command limits (shared with `navtui batch`)."""
    group = parser.add_argument_group("limits")
    group.add_argument(
        "--max-steps", type=positive_int, default=50, metavar="N",
        help="proposals executed or rejected before stopping (default 50)",
    )
    group.add_argument(
        "--max-time", type=positive_float, metavar="S", help="wall-clock seconds for the session"
    )
    group.add_argument(
        "--command-timeout", type=positive_float, default=120.0, metavar="S",
        help="seconds one command may run before it is killed (default 120)",
    )
    group.add_argument(
        "--max-new-tokens", type=positive_int, metavar="N",
        help="tokens one reply may generate (default: the preset's, else 1024)",
    )
    group.add_argument(
        "--max-stuck", type=positive_int, default=2, metavar="N",
        help="headless runs stop (reason `stuck`, exit 2) after N turns in which the model "
        "repeated itself (default 2)",
    )


def add_sandbox_args(parser: argparse.ArgumentParser) -> None:
    """Where the model's commands run (see README, "Safety")."""
    group = parser.add_argument_group("sandbox")
    group.add_argument(
        "--sandbox", choices=SANDBOX_MODES, default="auto",
        help="run commands in a bubblewrap sandbox: the repo at /testbed, the system and your "
        "toolchain read-only, no secrets, no network (auto: when bwrap works here, else say "
        "why; on: refuse without it)",
    )
    group.add_argument(
        "--network", action="store_true",
        help="let sandboxed commands use the network (e.g. pip install)",
    )
    group.add_argument(
        "--writable", action="append", default=[], metavar="PATH",
        help="a directory the sandbox may write to, e.g. a venv or cache (repeatable)",
    )
    group.add_argument(
        "--expose", action="append", default=[], metavar="PATH",
        help="a file or directory shown read-only inside the sandbox beside the toolchain on "
        "PATH, e.g. ~/datasets (repeatable; credentials and histories never are)",
    )


def add_patch_scope_args(group: argparse._ActionsContainer) -> None:
    """What the patch holds (shared with `navtui batch`; see agent_core.patch_scope)."""
    group.add_argument(
        "--keep-pycache", action="store_true",
        help="keep Python bytecode (__pycache__/, *.pyc) that no ignore rule covers in the patch "
        "(left out by default, with a notice)",
    )


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def build_parser() -> Parser:
    parser = Parser(
        prog="navtui",
        usage="navtui [options] [REPO]\n       navtui SUBCOMMAND [options]",
        description="Fix code with a local model: it proposes one action at a time, you approve.",
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"navtui {__version__}")
    parser.add_argument("--auto", action="store_true", help="approve every action (headless)")
    parser.add_argument(
        "--plain", action="store_true", help="ask on stdin for each action, no full-screen app"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON event per line, not a transcript"
    )
    parser.add_argument(
        "--quiet", action="store_true",
        help="headless: no load progress or per-turn token lines on stderr",
    )
    issue = parser.add_mutually_exclusive_group()
    issue.add_argument("--issue", metavar="TEXT", help="the issue to fix")
    issue.add_argument("--issue-file", metavar="FILE", help="read the issue from a file")
    add_backend_args(parser)
    add_limit_args(parser)
    add_sandbox_args(parser)
    out = parser.add_argument_group("output")
    out.add_argument("--patch-out", metavar="FILE", help="write the session's patch here")
    add_patch_scope_args(out)
    out.add_argument(
        "--trajectory", metavar="FILE",
        help="session log path (default: .git/navtui/sessions/<id>.jsonl)",
    )
    parser.add_argument(
        "--resume", metavar="ID|last",
        help="continue a logged session (see `navtui sessions`); `last`: the repository's newest",
    )
    parser.add_argument(
        "--force", action="store_true",
        help="with --resume: put the last checkpoint back even over files changed since the "
        "session stopped (they are kept by default; forced, they are saved in a ref first)",
    )
    parser.add_argument(
        "repo", metavar="REPO", nargs="?",
        help="a local git repository (default: the one containing the current directory)",
    )
    return parser


# --- building blocks (also used by `navtui batch`) -------------------------------------------


def backend_config(args: argparse.Namespace) -> BackendConfig:
    """The resolved backend choice of parsed flags; BackendError says what to fix. (A resumed
    `navtui demo` session names the demo's own model, which only the app layer has.)"""
    if args.backend == DEMO_BACKEND:
        return BackendConfig(backend=DEMO_BACKEND, model=args.model, script=args.script,
                             dialect="toolcall")
    return resolve(
        BackendConfig(
            backend=args.backend,
            model=args.model,
            adapter=args.adapter,
            load_in_4bit=args.load_in_4bit,
            load_in_8bit=args.load_in_8bit,
            base_url=args.base_url,
            api_key=args.api_key,
            script=args.script,
            dialect=args.dialect,
            max_new_tokens=args.max_new_tokens,
            request_timeout=args.request_timeout,
            tokenizer=args.tokenizer,
            threads=args.threads,
        )
    )


def make_backend(args: argparse.Namespace, progress: ProgressCallback | None = None) -> Backend:
    if args.backend == DEMO_BACKEND:
        from app.demo import DemoBackend, load_beats

        return DemoBackend(load_beats())
    return create_backend(backend_config(args), progress)


def session_config(args: argparse.Namespace) -> SessionConfig:
    resolved = backend_config(args)
    preset = PRESETS.get(resolved.preset or "")
    profile = getattr(args, "prompt_profile", None) or (preset.prompt_profile if preset else None)
    if profile is not None:
        try:
            load_profile(profile)
        except ProfileError as error:
            raise CliError(str(error)) from None
    return SessionConfig(
        dialect=resolved.dialect,
        context_window=resolved.context_window or SessionConfig.context_window,
        max_new_tokens=resolved.max_new_tokens or SessionConfig.max_new_tokens,
        max_steps=args.max_steps,
        max_time=args.max_time,
        command_timeout=args.command_timeout,
        # Only runs nobody watches stop by themselves; in the app the user sees the notices.
        max_stuck=args.max_stuck if getattr(args, "auto", True) else None,
        backend_info=describe(resolved),
        prompt_profile=profile,
        # A replay script replays a recording, which has a review turn only if it was recorded.
        submit_review=not getattr(args, "no_submit_review", False) and not spec_for(resolved.backend).scripted,
        keep_pycache=getattr(args, "keep_pycache", False),
    )


def backend_secrets(args: argparse.Namespace) -> list[str]:
    """Values that must never reach a log or a transcript (see `secret_values`)."""
    from agent_core.backends.credentials import secret_values

    return secret_values(args.api_key, args.base_url)


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


def batch_parser() -> Parser:
    """`navtui batch`'s parser (its settings are valid in the config file too)."""
    from app.subcommands import add_batch_args

    parser = Parser(prog="navtui batch")
    add_batch_args(parser)
    return parser


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


def read_issue(args: argparse.Namespace) -> str | None:
    if args.issue_file:
        try:
            text = Path(args.issue_file).expanduser().read_text(encoding="utf-8")
        except OSError as error:
            reason = error.strerror or error
            raise CliError(f"cannot read --issue-file {args.issue_file}: {reason}") from None
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


def trajectory_path(args: argparse.Namespace, workspace: Workspace, session_id: str) -> Path:
    from agent_core.trajectory import default_path, repo_state_dir

    if args.trajectory:
        return Path(args.trajectory).expanduser()
    return default_path(repo_state_dir(workspace.root), session_id)


def sandbox_launcher(args: argparse.Namespace, root: Path) -> Launcher:
    """How the shell starts in `root` as the sandbox flags say; an `auto` fallback is reported
    here (call once per run); `on` without a working bwrap raises SandboxError naming the fix."""
    settings = SandboxSettings(
        mode=args.sandbox, network=args.network, writable=tuple(Path(p) for p in args.writable),
        expose=tuple(Path(p) for p in args.expose),
    )
    launcher, notice = resolve_sandbox(settings, root)
    if notice:
        print(f"navtui: {notice}", file=sys.stderr)
    return launcher


def sandbox_settings(args: argparse.Namespace) -> SandboxSettings:
    """The sandbox flags with `auto` decided once, for runs of many sessions (`navtui batch`)."""
    launcher = sandbox_launcher(args, Path.cwd())
    return SandboxSettings(mode="on" if launcher.sandboxed else "off", network=args.network,
                           writable=tuple(Path(p) for p in args.writable),
                           expose=tuple(Path(p) for p in args.expose))


def make_executor(args: argparse.Namespace, workspace: Workspace) -> Executor:
    """The session's executor, its shell sandboxed as `--sandbox` says."""
    launcher = sandbox_launcher(args, workspace.root)
    return Executor(workspace.root, command_timeout=args.command_timeout, launcher=launcher)


def new_session(
    args: argparse.Namespace,
    workspace: Workspace,
    issue: str | None,
    executor: Executor | None = None,
    progress: ProgressCallback | None = None,
) -> Session:
    """A fresh session; its log is written from its first event on. `progress` hears the
    model load."""
    from agent_core.trajectory import TrajectoryWriter

    config = session_config(args)
    backend = make_backend(args, progress)
    session_id = new_session_id()
    session = Session(
        workspace=workspace,
        executor=executor or make_executor(args, workspace),
        backend=backend,
        issue=issue or "",
        config=config,
        session_id=session_id,
    )
    path = trajectory_path(args, workspace, session_id)
    writer = TrajectoryWriter(path, secrets=backend_secrets(args))
    session.subscribe(writer)
    subscribe_patch_out(args, session)
    return session


def subscribe_patch_out(args: argparse.Namespace, session: Session) -> None:
    """With `--patch-out FILE`, write the session's patch there when it finishes (every mode)."""
    if not args.patch_out:
        return
    patch_out = Path(args.patch_out).expanduser()

    def write(event: Event) -> None:
        if not isinstance(event, SessionFinished):
            return
        try:
            write_patch(event.patch if event.patch_complete else session.full_patch(),
                        patch_out)
        except OSError as error:
            print(f"navtui: cannot write --patch-out {patch_out}: {error.strerror or error}",
                  file=sys.stderr)

    session.subscribe(write)


def resume(
    args: argparse.Namespace,
    workspace: Workspace,
    listeners: tuple[Callable[[Event], None], ...] = (),
    executor: Executor | None = None,
    progress: ProgressCallback | None = None,
) -> Session:
    """Carry on the logged session `args.resume` (its log is appended to)."""
    from agent_core.resume import resume_session
    from agent_core.trajectory import TrajectoryWriter

    path = resume_log_path(args, workspace, args.resume)
    args = with_logged_backend(args, logged_backend(path))
    writer = TrajectoryWriter(path, secrets=backend_secrets(args), resumed=True)
    session = resume_session(
        path,
        workspace=workspace,
        executor=executor or make_executor(args, workspace),
        backend=make_backend(args, progress),
        listeners=[writer, *listeners],
        overwrite_changes=args.force,
        submitted_ok=not args.auto,  # the app and --plain offer to go on with a message
        max_steps=args.max_steps,
        max_time=args.max_time,
        command_timeout=args.command_timeout,
        max_stuck=args.max_stuck if getattr(args, "auto", True) else None,
        **({"max_new_tokens": args.max_new_tokens} if args.max_new_tokens else {}),
    )
    subscribe_patch_out(args, session)
    return session


def resume_log_path(args: argparse.Namespace, workspace: Workspace, session_id: str) -> Path:
    """The log of `session_id`: `--trajectory FILE` when it names the `--resume` session."""
    from agent_core.trajectory import find_trajectory

    if args.trajectory and session_id == args.resume:
        return Path(args.trajectory).expanduser()
    return find_trajectory(workspace.root, session_id)


def logged_backend(path: Path) -> dict:
    """The backend description a session logged (`SessionConfig.backend_info`)."""
    from agent_core.trajectory import read_trajectory

    return read_trajectory(path).config.get("backend_info") or {}


BACKEND_CHOICE_FLAGS = ("backend", "model", "script", "base_url")
# What `--resume ID` takes from the log unless a flag says otherwise (the config file does not).
LOGGED_BACKEND_OPTIONS = (*BACKEND_CHOICE_FLAGS, "adapter", "load_in_4bit", "load_in_8bit", "dialect")


def with_logged_backend(args: argparse.Namespace, info: dict) -> argparse.Namespace:
    """`args` with the logged session's backend when no flag chose one (plain `--resume ID`)."""
    if any(getattr(args, flag) for flag in BACKEND_CHOICE_FLAGS):
        return args
    logged = {
        "backend": info.get("backend"),
        "model": info.get("preset") or info.get("model"),
        "adapter": args.adapter or info.get("adapter"),
        "script": info.get("script"),
        "base_url": info.get("base_url"),
        "load_in_4bit": args.load_in_4bit or info.get("quantization") == "4-bit",
        "load_in_8bit": args.load_in_8bit or info.get("quantization") == "8-bit",
    }
    if args.dialect == "auto" and info.get("dialect"):
        logged["dialect"] = info["dialect"]
    return argparse.Namespace(**{**vars(args), **logged})


def run_headless(
    args: argparse.Namespace, workspace: Workspace, issue: str | None, mode: str
) -> int:
    """`--auto` / `--plain`: run to the end, printing a transcript or JSON lines."""
    from rich.console import Console

    from agent_core.policy import AskPolicy, AutoPolicy, Policy
    from app.headless import JsonLines, LoadLines, StdinPrompter, Transcript, TurnMeter

    console = Console(stderr=args.json, highlight=False)
    secrets = backend_secrets(args)
    printer = (JsonLines(sys.stdout, secrets=secrets) if args.json
               else Transcript(console, secrets=secrets))
    listeners: list[Callable[[Event], None]] = [printer]
    progress: ProgressCallback | None = None
    if isinstance(printer, JsonLines):
        progress = printer.load_progress
    elif not args.quiet:
        progress = LoadLines(sys.stderr)
        rates = not spec_for(backend_config(args).backend or "").scripted
        listeners.append(TurnMeter(sys.stderr, live=sys.stderr.isatty(), rates=rates))
    if args.resume:
        session = resume(args, workspace, listeners=tuple(listeners), progress=progress)
    else:
        session = new_session(args, workspace, issue, progress=progress)
        for listener in listeners:
            session.subscribe(listener)
    if isinstance(printer, Transcript):
        printer.paths = session.executor.path_map
    if mode == "auto":
        policy: Policy = AutoPolicy()
    else:
        ask = StdinPrompter(session.parse_edit, console, lambda text: read_line(text, console.file))
        policy = AskPolicy(ask)
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
    return FinishReason(finished.reason).exit_code


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
    from app.config import load_config
    from app.tui import LoadRelay, run_tui

    info = describe(backend_config(args))  # refuses bad model flags before the screen opens
    settings = load_config(build_parser(), also=(batch_parser(),))  # theme, keymap, allow rules (validated in `main`)
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
