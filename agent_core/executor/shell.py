"""One persistent bash per session in a non-interactive environment, driven through a pty
with pexpect.

Each command is written to a private script file and `source`d with stdin from /dev/null, so
`cd`/`export` persist, unbalanced quotes are a syntax error instead of a hang, and a command
waiting for input sees EOF. A sentinel printed after the command carries its exit code and the
new working directory. After a command that may have changed the exported variables (see
`_MAY_EXPORT`), bash also saves them (`export -p`) for a restart to bring back; doing that after
every command would double the cost of a quick one. Output is read straight from the pty fd.
bash runs without a controlling terminal (programs that open /dev/tty for a password or a
keypress fail at once) in one process group, which a timeout kills entirely.
A launcher (agent_core/executor/sandbox.py) decides where bash runs: plainly, or inside a
bubblewrap sandbox where the repository is /testbed; a sandbox's pid namespace is killed whole.
Full-screen programs that would wait for keys on the pty are replaced by shell functions: pagers
print like `cat`, editors refuse with a hint.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import select
import secrets
import shlex
import shutil
import signal
import tempfile
import termios
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pexpect

from agent_core.executor.output import BoundedOutput
from agent_core.executor.sandbox import Launcher, Plain, without_secrets
from agent_core.steps import Observation

# Set for every command: no pagers, no prompts, no colours, unbuffered Python.
NONINTERACTIVE_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "SSH_ASKPASS_REQUIRE": "never",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_NO_INPUT": "1",
    "PYTHONUNBUFFERED": "1",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "HISTFILE": "/dev/null",
    "PS1": "",
    "PS2": "",
    "PS4": "+ ",
}
# Startup files the shell must not read: they could print, prompt or change the environment.
DROPPED_ENV = ("BASH_ENV", "ENV", "PROMPT_COMMAND", "CDPATH")
# Defined in every new shell: pagers and editors would otherwise read keys from the pty and hang.
EDITORS = ("vi", "vim", "nvim", "nano", "emacs", "pico")
SCREEN_PROGRAM_FUNCTIONS = (
    'less() { local arg files=(); for arg; do [[ $arg == [-+]* ]] || files+=("$arg"); done; '
    'cat -- "${files[@]}"; }\n'
    'more() { less "$@"; }\n'
    + "".join(
        f'{name}() {{ echo "{name}: interactive editors cannot run here; change files with the '
        'edit tools, sed or a python script" >&2; return 1; }\n'
        for name in EDITORS
    )
)
STARTUP_TIMEOUT = 15.0
TIMEOUT_HINT = (
    " Run long jobs in the background with output redirected to a file, or pick a quicker command."
)
_READ_SIZE = 1 << 16
# Anything that may change the exported variables: export/declare/unset..., sourcing a file
# (`. venv/bin/activate`), eval, `set -a`, (de)activate functions, and any assignment (it
# changes an already exported variable such as PATH). A false positive only costs a save.
_MAY_EXPORT = re.compile(
    r"\b(?:export|unset|declare|typeset|readonly|source|eval|set|activate|deactivate)\b"
    r"|(?:^|[\s;&|(){}`])(?:\.\s|[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=)"
)
_TRAILER_LIMIT = 1 << 16
_LIVENESS_POLL = 0.2
# Shells are started from this one long-lived thread: bwrap's --die-with-parent (the kernel's
# parent-death signal) fires when the *thread* that forked it ends, and shells are often started
# from short-lived worker threads.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="navtui-shell-spawner")


class _Timeout(Exception):
    def __init__(self, output: BoundedOutput) -> None:
        self.output = output


class _Died(Exception):
    def __init__(self, output: BoundedOutput) -> None:
        self.output = output


def _detach_terminal() -> None:
    """Runs in the forked child before exec: give up the controlling terminal, raw output."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    fcntl.ioctl(0, termios.TIOCNOTTY)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    attrs = termios.tcgetattr(0)
    attrs[1] &= ~termios.ONLCR
    attrs[3] &= ~(termios.ECHO | termios.ECHONL)
    termios.tcsetattr(0, termios.TCSANOW, attrs)


def _memory_tmp() -> str | None:
    """A RAM-backed temp dir when there is one: the per-command files are rewritten constantly."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def shell_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment the session's bash starts with: `base` (by default navtui's own, minus
    credentials) made non-interactive."""
    source = without_secrets(dict(os.environ)) if base is None else base
    env = {k: v for k, v in source.items() if k not in DROPPED_ENV}
    env.update(NONINTERACTIVE_ENV)
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env


def _processes() -> list[tuple[int, list[str]]]:
    """(pid, the fields of /proc/PID/stat after the command name) for every process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        found.append((int(entry), stat[stat.rfind(")") + 2 :].split()))
    return found


def _session_members(sid: int) -> list[int]:
    """Pids whose session id is `sid` (background jobs that left the process group)."""
    return [pid for pid, fields in _processes() if len(fields) > 3 and int(fields[3]) == sid]


def _children(parent: int) -> list[tuple[int, str]]:
    """(pid, start time) of the processes whose parent is `parent`: the start time tells the
    process from a later one that reuses its pid."""
    return [(pid, fields[19]) for pid, fields in _processes()
            if len(fields) > 19 and int(fields[1]) == parent]


def _kill_if_same(process: tuple[int, str]) -> None:
    """SIGKILL `process` unless its pid now belongs to another process."""
    pid, started = process
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) > 19 and fields[19] == started:
        _signal(os.kill, pid)


def _wait_dead(processes: list[tuple[int, str]], within: float = 5.0) -> None:
    """Wait until each process has exited (gone, a zombie, or its pid reused). A sandbox's
    first process exits only after every process of its pid namespace is dead."""
    deadline = time.monotonic() + within
    for pid, started in processes:
        while time.monotonic() < deadline:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                break
            fields = stat[stat.rfind(")") + 2 :].split()
            if fields[0] == "Z" or len(fields) <= 19 or fields[19] != started:
                break
            time.sleep(0.005)


def _remove_private_files(script_fd: int, directory: Path) -> None:
    os.close(script_fd)
    shutil.rmtree(directory, ignore_errors=True)


def _signal(send: Callable[[int, int], None], target: int) -> None:
    try:
        send(target, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Shell:
    """A persistent bash. `run` never raises for what the command does; see the module doc.

    `send_delay` is pexpect's `delaybeforesend` (its default, 0.05 s, would be paid on every
    command; bench/shell_roundtrip.py measures it). None sends at once. `launcher` starts bash
    (default: plainly in `cwd`); with a sandbox, `cwd` and `home` are paths inside it.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        timeout: float = 120.0,
        output_limit: int = 16_000,
        send_delay: float | None = None,
        launcher: Launcher | None = None,
    ) -> None:
        self.launcher = launcher or Plain(Path(cwd))
        self.home = self.launcher.home
        self.cwd = self.home
        self.timeout = timeout
        self.output_limit = output_limit
        self.send_delay = send_delay
        self._dir = Path(tempfile.mkdtemp(prefix="navtui-shell-", dir=_memory_tmp()))
        self._script = self._dir / "command.sh"
        self._script_fd = os.open(self._script, os.O_RDWR | os.O_CREAT, 0o600)
        self._exports = self._dir / "exports.sh"
        # Removes the private files even when a Shell is dropped without close().
        self._cleanup = weakref.finalize(self, _remove_private_files, self._script_fd, self._dir)
        token = secrets.token_hex(8)
        self._marker = f"NAVTUI_{token}:".encode()
        # The marker is assembled by printf, so the line we send never contains it verbatim.
        self._line = (
            f". {shlex.quote(str(self._script))} < /dev/null; "
            f"printf '%s_%s:%s:%s\\n' NAVTUI {token} \"$?\" \"$PWD\"\n"
        ).encode()
        # The same, saving the exported variables for a restart to bring back.
        self._line_saving = (
            self._line[:-1] + f"; export -p > {shlex.quote(str(self._exports))}\n".encode()
        )
        self._lock = threading.Lock()
        self._closed = False
        self._interrupted = False
        self._child: pexpect.spawn | None = None
        self._sandbox_init: list[tuple[int, str]] = []
        self._start()

    # -- lifecycle ---------------------------------------------------------------------------

    def _start(self) -> None:
        bash = shutil.which("bash") or "/bin/bash"
        # bash must not be a session leader, or it would take the pty as controlling terminal.
        wrapper = f"{shlex.quote(bash)} --norc --noprofile --noediting +m; exit $?"
        argv = self.launcher.argv(["/bin/sh", "-c", wrapper], self._dir)
        child = _SPAWNER.submit(
            pexpect.spawn,
            argv[0],
            argv[1:],
            cwd=str(self.launcher.root),
            env=shell_environment(self.launcher.environment()),
            echo=False,
            preexec_fn=_detach_terminal,
            dimensions=(50, 200),
        ).result()
        child.delaybeforesend = self.send_delay
        child.ptyproc.delayafterclose = 0.0
        child.ptyproc.delayafterterminate = 0.01
        self._child = child
        self._write_script(
            "set +o history\n"  # bash is interactive (stdin is a tty): keep no history
            + SCREEN_PROGRAM_FUNCTIONS
            + f". {shlex.quote(str(self._exports))} 2>/dev/null\n"
            + f"cd -- {shlex.quote(str(self.cwd))} 2>/dev/null || cd -- {shlex.quote(str(self.home))}"
        )
        try:
            _, _, cwd = self._exchange(self._line, STARTUP_TIMEOUT)
        except (_Timeout, _Died) as exc:
            self._kill()
            said = exc.output.text()[0].strip()
            if self.launcher.sandboxed:
                raise RuntimeError(f"could not start bash in the sandbox: {said or 'no output'}; "
                                   "run with --sandbox off to go without it") from exc
            raise RuntimeError(
                f"could not start bash ({bash}); check that it runs: {bash} --version"
            ) from exc
        self.cwd = cwd
        # bwrap's first child is the sandbox's init: when it dies, the kernel kills everything
        # in the sandbox, `setsid` daemons included.
        self._sandbox_init = _children(child.pid) if self.launcher.sandboxed else []

    def _kill_processes(self) -> None:
        """SIGKILL the shell's process group and anything left in its session."""
        child = self._child
        if child is None:
            return
        for init in self._sandbox_init:
            _kill_if_same(init)
        _signal(os.killpg, child.pid)
        for member in _session_members(child.pid):
            _signal(os.kill, member)

    def _kill(self) -> int | None:
        """Kill everything and close the pty; the shell's exit status if it had exited."""
        child = self._child
        if child is None:
            return None
        self._kill_processes()
        self._child = None
        child.close(force=True)
        _wait_dead(self._sandbox_init)
        self._sandbox_init = []
        return child.exitstatus

    def interrupt(self) -> None:
        """Kill the running command (callable from another thread); `run` reports it and the
        shell restarts in the same directory."""
        self._interrupted = True
        self._kill_processes()

    def restart(self) -> None:
        """Kill the shell and everything it started; start a fresh one in the same directory."""
        with self._lock:
            self._settle()
            self._kill()
            self._start()

    def _settle(self) -> None:
        """Let a live shell finish what the last command line left running (saving the
        exported variables comes after its sentinel): one empty command, waited for."""
        if self._child is None or not self._child.isalive():
            return
        self._write_script(":")
        try:
            self._exchange(self._line, STARTUP_TIMEOUT)
        except (_Timeout, _Died):
            pass

    def close(self) -> None:
        """Kill the shell and all its processes, background ones included. Idempotent; a
        command running in another thread ends at once with an error observation."""
        self._closed = True
        self._kill_processes()
        with self._lock:
            self._kill()
            self._cleanup()

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """Process group id of the running shell (None when closed)."""
        return self._child.pid if self._child else None

    # -- running commands --------------------------------------------------------------------

    def run(self, command: str, timeout: float | None = None) -> Observation:
        """Run `command`; output capped, exit code reported, timeout kills and restarts."""
        limit = self.timeout if timeout is None else timeout
        with self._lock:
            if self._closed or self._child is None:
                return Observation(output="", error="the shell is closed; start a new session")
            self._interrupted = False
            self._write_script(command)
            line = self._line_saving if _MAY_EXPORT.search(command) else self._line
            try:
                output, code, cwd = self._exchange(line, limit)
            except _Timeout as exc:
                self._kill()
                what = f"command timed out after {limit:g} s and was killed, with every process it started"
                return self._recover(exc.output, what, TIMEOUT_HINT)
            except _Died as exc:
                status = self._kill()
                if self._closed:
                    what = "the shell was closed while the command ran"
                elif self._interrupted:
                    what = "the command was interrupted and killed, with every process it started"
                else:
                    what = (f"the shell exited with status {status} (the command ended it, e.g. with "
                            "`exit` or a failure under `set -e`)")
                return self._recover(exc.output, what)
            self.cwd = cwd
            text, truncated = output.text()
            return Observation(output=self._tidy(text), exit_code=code, truncated=truncated,
                               total_chars=output.chars if truncated else None)

    def _recover(self, output: BoundedOutput, what: str, hint: str = "") -> Observation:
        """After the shell was killed or died: start a new one (unless closing) and say so."""
        text, truncated = output.text()
        if self._closed:
            return Observation(output=self._tidy(text), truncated=truncated, error=what)
        self._start()
        message = (
            f"{what}; a new shell was started in {self.cwd} with the exported variables restored "
            f"(shell functions and unexported variables from earlier commands are gone).{hint}"
        )
        return Observation(output=self._tidy(text), truncated=truncated, error=message)

    def _write_script(self, command: str) -> None:
        """Overwrite the script in place: truncating to zero (open "w") makes ext4 flush to disk,
        which costs milliseconds per command."""
        data = (command if command.endswith("\n") else command + "\n").encode()
        os.pwrite(self._script_fd, data, 0)
        os.ftruncate(self._script_fd, len(data))

    def _tidy(self, text: str) -> str:
        """Error messages name the private script file; show them as bash would for a command."""
        return text.replace(f"{self._script}: ", "")

    def _exchange(self, line: bytes, timeout: float) -> tuple[BoundedOutput, int, Path]:
        """Send `line`, stream output into a bounded buffer until the sentinel."""
        child = self._child
        assert child is not None
        deadline = time.monotonic() + timeout
        output = BoundedOutput(self.output_limit)
        marker = self._marker
        keep = len(marker) - 1
        pending = b""
        child.send(line)
        while True:
            try:
                data = pending + self._read(child, deadline, output)
            except (_Timeout, _Died):
                output.feed(pending)
                raise
            found = data.find(marker)
            if found >= 0:
                output.feed(data[:found])
                trailer = data[found + len(marker) :]
                break
            # Hold back a possible partial marker until the next read completes it.
            output.feed(data[:-keep])
            pending = data[-keep:]
        while b"\n" not in trailer and len(trailer) < _TRAILER_LIMIT:
            trailer += self._read(child, deadline, output)
        code, _, cwd = trailer.split(b"\n", 1)[0].partition(b":")
        return output, int(code), Path(os.fsdecode(cwd))

    @staticmethod
    def _read(child: pexpect.spawn, deadline: float, output: BoundedOutput) -> bytes:
        """The next chunk of output, read straight from the pty. Waits in short slices and checks
        between them whether the shell died, which a background job still holding the pty would
        otherwise hide."""
        fd = child.child_fd
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout(output)
            if select.select([fd], [], [], min(remaining, _LIVENESS_POLL))[0]:
                try:
                    data = os.read(fd, _READ_SIZE)
                except OSError as exc:  # EIO: every process holding the pty has exited
                    if exc.errno != errno.EIO:
                        raise
                    data = b""
                if data:
                    return data
                raise _Died(output)
            if not child.isalive():
                raise _Died(output)
