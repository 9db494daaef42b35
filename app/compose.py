"""The composition root: parsed flags become a backend, an executor and a session.

`app.cli`'s modes and `navtui batch` build everything they run here: the backend and session
configs, the sandboxed executor, a new session with its log (and `--patch-out`), and a resumed
one with the backend its log names.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from agent_core.backends.base import Backend, BackendError, ProgressCallback
from agent_core.backends.factory import BackendConfig, BackendSpec, describe, resolve, spec_for
from agent_core.backends.presets import PRESETS
from agent_core.events import Event, SessionFinished
from agent_core.executor import Executor
from agent_core.executor.sandbox import Launcher, SandboxSettings, resolve_sandbox
from agent_core.git import write_patch
from agent_core.profiles import ProfileError
from agent_core.prompts import check_profile
from agent_core.session import Session, SessionConfig, new_session_id
from agent_core.workspace import Workspace
from app.args import CliError


DEMO_BACKEND = "demo"  # `navtui demo`'s scripted model, as its sessions log it


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
            adapter=registered_adapter(args),
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


def registered_adapter(args: argparse.Namespace) -> str | None:
    """`--adapter`, with `current` the directory REPO's registry names (`navtui adapters`)."""
    from agent_core.adapters import CURRENT, Registry, RegistryError
    from agent_core.trajectory import TrajectoryError

    if args.adapter != CURRENT:
        return args.adapter
    try:
        return str(Registry(getattr(args, "repo", None) or ".").get(CURRENT).path)
    except (RegistryError, TrajectoryError) as error:
        raise BackendError(f"--adapter current: {error}") from None


def backend_spec(config: BackendConfig) -> BackendSpec:
    """What the backend of a resolved config is like (scripted, loads weights, how it is built);
    the demo's model is the app's own."""
    if config.backend == DEMO_BACKEND:
        from app.demo_model import DEMO_SPEC

        return DEMO_SPEC
    return spec_for(config.backend or "")


def make_backend(args: argparse.Namespace, progress: ProgressCallback | None = None) -> Backend:
    config = backend_config(args)
    return backend_spec(config).create(config, progress, None)


def prompt_profile(args: argparse.Namespace, resolved: BackendConfig) -> str | None:
    """The prompt profile the flags (else the preset) choose, checked now rather than when the
    session first needs one of its templates; CliError says what is wrong with it."""
    preset = PRESETS.get(resolved.preset or "")
    profile = getattr(args, "prompt_profile", None) or (preset.prompt_profile if preset else None)
    if profile is not None:
        try:
            check_profile(profile, resolved.dialect)
        except ProfileError as error:
            raise CliError(str(error)) from None
    return profile


def session_config(args: argparse.Namespace) -> SessionConfig:
    resolved = backend_config(args)
    profile = prompt_profile(args, resolved)
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
        submit_review=not getattr(args, "no_submit_review", False) and not backend_spec(resolved).scripted,
        keep_pycache=getattr(args, "keep_pycache", False),
    )


def backend_secrets(args: argparse.Namespace) -> list[str]:
    """Values that must never reach a log or a transcript (see `secret_values`)."""
    from agent_core.backends.credentials import secret_values

    return secret_values(args.api_key, args.base_url)


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
    """The session's executor, its shell sandboxed as `--sandbox` says, in plan mode with
    `--mode plan` (`resume` sets a resumed session's mode)."""
    launcher = sandbox_launcher(args, workspace.root)
    executor = Executor(workspace.root, command_timeout=args.command_timeout, launcher=launcher)
    executor.set_plan(getattr(args, "mode", None) == "plan")
    return executor


def new_session(
    args: argparse.Namespace,
    workspace: Workspace,
    issue: str | None,
    executor: Executor | None = None,
    progress: ProgressCallback | None = None,
    listeners: tuple[Callable[[Event], None], ...] = (),
) -> Session:
    """A fresh session; its log is written from its first event on, and `listeners` hear
    every event too. `progress` hears the model load."""
    from agent_core.trajectory import TrajectoryWriter
    from app.rule_sources import remember_repository

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
    for listener in listeners:
        session.subscribe(listener)
    subscribe_patch_out(args, session)
    start_mode(args, session)
    remember_repository(workspace.root)  # (for rule suggestions from every repository)
    return session


def start_mode(args: argparse.Namespace, session: Session, logged: str = "normal") -> None:
    """The model is told the mode the session starts in when it is plan mode (`--mode plan`;
    its executor was made in it, see `make_executor`), or when it differs from the `logged`
    one a resumed session was last told about."""
    from agent_core.plan_mode import tell_mode

    if session.executor.plan or logged == "plan":
        tell_mode(session)


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
    from agent_core.plan_mode import logged_mode
    from agent_core.resume import resume_session
    from agent_core.trajectory import TrajectoryWriter, read_trajectory

    path = resume_log_path(args, workspace, args.resume)
    args = with_logged_backend(args, logged_backend(path))
    logged = logged_mode(read_trajectory(path))
    executor = executor or make_executor(args, workspace)
    executor.set_plan((getattr(args, "mode", None) or logged) == "plan")  # (no --mode: as left)
    writer = TrajectoryWriter(path, secrets=backend_secrets(args), resumed=True)
    session = resume_session(
        path,
        workspace=workspace,
        executor=executor,
        backend=make_backend(args, progress),
        listeners=[writer, *listeners],
        overwrite_changes=args.force,
        submitted_ok=not args.auto,  # the app and --plain offer to go on with a message
        max_steps=args.max_steps,
        max_time=args.max_time,
        command_timeout=args.command_timeout,
        max_stuck=args.max_stuck if getattr(args, "auto", True) else None,
        prompt_profile=getattr(args, "prompt_profile", None),
        **({"max_new_tokens": args.max_new_tokens} if args.max_new_tokens else {}),
    )
    subscribe_patch_out(args, session)
    start_mode(args, session, logged)
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
    """`args` with the logged session's backend when no flag chose one (plain `--resume ID`).
    A server URL is never taken from a log (your API key would go wherever it pointed): the
    user names it again with `--base-url`."""
    if any(getattr(args, flag) for flag in BACKEND_CHOICE_FLAGS):
        return args
    url = info.get("base_url")
    if url:
        flags = f"--base-url {shlex.quote(str(url))}" + (
            f" --model {shlex.quote(str(info['model']))}" if info.get("model") else "")
        raise CliError(
            f"the session used the server {url}; a session log is never a source of URLs (your "
            f"API key would be sent there): resume with `{flags}`"
        )
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
