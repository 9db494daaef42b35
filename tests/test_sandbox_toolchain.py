"""The user's toolchain works inside the sandbox and their secrets stay out (real bwrap, a fake
HOME laid out like a developer's): pyenv shims, a ~/.local/bin tool, `--expose`; ~/.ssh and the
rest of the deny list never; no host unix socket outside the system directories."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.executor.exposure import DENIED_IN_HOME
from agent_core.executor.sandbox import Bubblewrap, SandboxError, check_sandbox
from agent_core.executor.shell import Shell
from tests.test_cli import ISSUE, navtui
from tests.test_doctor import lines_after
from tests.test_sandbox import needs_bwrap
from tests.test_sandbox_cli import observations
from tests.test_session import write_script

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap needs Linux")

PYENV_LIBEXEC = """#!/bin/sh
# What `pyenv exec PROGRAM ARGS` does: run PROGRAM from the selected version.
[ "$1" = exec ] || exit 2
shift
program=$1
shift
version=${PYENV_VERSION:-$(cat "$PYENV_ROOT/version")}
exec "$PYENV_ROOT/versions/$version/bin/$program" "$@"
"""
SHIM = """#!/usr/bin/env bash
set -e
program="${{0##*/}}"
export PYENV_ROOT="{root}"
exec "{root}/libexec/pyenv" exec "$program" "$@"
"""
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- navtui-test"


def _write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.fixture
def home() -> Iterator[Path]:
    """A developer's HOME outside /tmp: python from pyenv shims (its one version a link to this
    Python's installation, as `pyenv` users link system or uv-managed Pythons), a tool in
    ~/.local/bin linked to its own installation, an SSH key, a gh login and a shell history."""
    if not (Path(sys.prefix) / "bin/python").exists():
        pytest.skip(f"this Python's installation ({sys.prefix}) has no bin/python to link to")
    path = Path(tempfile.mkdtemp(prefix="navtui-dev-home-", dir="/var/tmp")).resolve()
    root = path / ".pyenv"
    _write(root / "libexec/pyenv", PYENV_LIBEXEC, 0o755)
    _write(root / "version", "navtui\n")
    (root / "versions").mkdir()
    (root / "versions/navtui").symlink_to(sys.prefix)
    for program in ("python", "python3"):
        _write(root / "shims" / program, SHIM.format(root=root), 0o755)
    tool = path / ".local/share/greeter"
    _write(tool / "lib/greeting.txt", "hello from the greeter\n")
    _write(tool / "bin/greet", '#!/bin/sh\ncat "$(dirname "$(readlink -f "$0")")/../lib/greeting.txt"\n',
           0o755)
    (path / ".local/bin").mkdir(parents=True)
    (path / ".local/bin/greet").symlink_to(tool / "bin/greet")
    _write(path / "dotfiles/bin/hello", "#!/bin/sh\necho hello from dotfiles\n", 0o755)
    (path / "bin").symlink_to(path / "dotfiles/bin")  # a PATH entry that is a link
    _write(path / ".ssh/id_rsa", SECRET + "\n", 0o600)
    _write(path / ".config/gh/hosts.yml", "oauth_token: gho_navtui_test\n")
    _write(path / ".config/navtui/config.toml", "api_key = 'navtui-config-secret'\n")
    _write(path / ".config/tool/settings.ini", "colour = blue\n")
    _write(path / ".bash_history", "export TOKEN=navtui-history-secret\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def developer_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "LANG": "C.UTF-8",
            "PATH": f"{home}/.pyenv/shims:{home}/.local/bin:{home}/bin:/usr/bin:/bin"}


def launcher(repo: Path, home: Path, **options) -> Bubblewrap:
    """A sandbox that knows nothing of navtui's own Python: only what the fake HOME's PATH
    leads to is shown."""
    check = check_sandbox()
    assert check.available and check.bwrap, check.reason
    return Bubblewrap(repo, check.bwrap, environ=developer_env(home), readable=(), **options)


@needs_bwrap
def test_pyenv_shims_and_local_tools_run_while_the_key_stays_out(git_repo: Path, home: Path):
    sandbox = launcher(git_repo, home)
    with Shell(git_repo, timeout=60, launcher=sandbox) as sh:
        assert sh.run("command -v python").output == f"{home}/.pyenv/shims/python\n"
        tests = sh.run("python -m pytest -q -p no:cacheprovider tests")
        assert tests.exit_code == 1 and "1 failed" in tests.output, tests  # the planted bug
        assert sh.run("greet").output == "hello from the greeter\n"
        assert sh.run("hello").output == "hello from dotfiles\n"
        for secret in (".ssh/id_rsa", ".config/gh/hosts.yml", ".bash_history",
                       ".config/navtui/config.toml"):
            obs = sh.run(f"cat {home}/{secret}")
            assert obs.exit_code != 0 and "No such file" in obs.output, (secret, obs)
        # Shown means read-only, and the home itself is still a throw-away directory.
        assert "Read-only file system" in sh.run(f"touch {home}/.pyenv/planted").output
        assert sh.run("echo scratch > ~/scratch && cat ~/scratch").output == "scratch\n"
        listing = sh.run("ls -A ~").output.split()
    assert sorted(listing) == [".local", ".pyenv", "bin", "dotfiles", "scratch"]
    assert not (home / "scratch").exists() and not (home / ".pyenv/planted").exists()
    where = sandbox.describe()
    shown = where.split(", read-only: ")[1].split(", ")
    assert {"~/.local/bin", "~/.local/share/greeter", "~/.pyenv"} <= set(shown)
    assert str(Path(sys.prefix).resolve()) in shown and ".ssh" not in where


@needs_bwrap
def test_expose_shows_more_but_masks_what_is_denied_inside(git_repo: Path, home: Path):
    sandbox = launcher(git_repo, home, expose=(home / ".config",))
    assert f"{home}/.config/gh" in sandbox.exposure.masked
    with Shell(git_repo, timeout=30, launcher=sandbox) as sh:
        assert sh.run(f"cat {home}/.config/tool/settings.ini").output == "colour = blue\n"
        found = sh.run(f"find {home}/.config/gh {home}/.config/navtui -mindepth 1 | wc -l")
        assert found.output == "0\n", found
        assert sh.run(f"cat {home}/.ssh/id_rsa").exit_code != 0
        assert "Read-only" in sh.run(f"touch {home}/.config/gh/x").output
    assert "~/.config" in sandbox.describe()


@needs_bwrap
@pytest.mark.parametrize("name", [".ssh", ".ssh/id_rsa", ".config/gh", ".bash_history"])
def test_a_denied_path_cannot_be_exposed_or_put_on_path(git_repo: Path, home: Path, name: str):
    with pytest.raises(SandboxError, match="never shows credentials"):
        launcher(git_repo, home, expose=(home / name,))
    with pytest.raises(SandboxError, match="whole home"):
        launcher(git_repo, home, expose=(home,))
    with pytest.raises(SandboxError, match="no such file"):
        launcher(git_repo, home, expose=(home / "missing",))
    env = developer_env(home)
    env["PATH"] = f"{home}/.ssh:{env['PATH']}"
    check = check_sandbox()
    on_path = Bubblewrap(git_repo, check.bwrap, environ=env, readable=())
    assert f"{home}/.ssh" in on_path.exposure.refused
    assert not any(".ssh" in path for path in on_path.exposure.paths)


def test_the_deny_list_names_what_the_issue_lists():
    for name in (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".netrc",
                 ".git-credentials", ".docker", ".kube", ".pypirc", ".bash_history",
                 ".zsh_history", ".python_history", ".local/share/fish/fish_history",
                 ".config/navtui"):
        assert name in DENIED_IN_HOME, name


@needs_bwrap
def test_a_sandboxed_session_runs_the_users_python_and_tools(git_repo: Path, home: Path,
                                                             tmp_path: Path):
    script = write_script(tmp_path / "script.jsonl", [
        "Thought: Run the tests.\nAction: bash python -m pytest -q -p no:cacheprovider tests",
        "Thought: A tool.\nAction: bash greet",
        f"Thought: Keys?\nAction: bash cat {home}/.ssh/id_rsa",
        f"Thought: Settings.\nAction: bash cat {home}/.config/tool/settings.ini",
        "Thought: Done.\nAction: submit",
    ])
    config = _write(tmp_path / "config.toml", f'expose = ["{home}/.config/tool"]\n')
    result = navtui("--auto", "--json", "--sandbox", "on", "--backend", "replay",
                    "--script", str(script), "--issue", ISSUE, str(git_repo),
                    env={**developer_env(home), "NAVTUI_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr
    seen = observations(result.stdout)
    assert "1 failed" in seen[0]["output"] and seen[0]["exit_code"] == 1, seen[0]
    assert seen[1]["output"] == "hello from the greeter\n"
    assert seen[2]["exit_code"] != 0 and SECRET not in seen[2]["output"]
    assert seen[3]["output"] == "colour = blue\n"  # the config's `expose`
    assert SECRET not in result.stdout
    where = json.loads(result.stdout.splitlines()[0])["config"]["sandbox"]
    assert "~/.pyenv" in where and "~/.config/tool" in where and "~/.local/bin" in where


@needs_bwrap
def test_doctor_says_what_is_shown_and_what_never_is(home: Path, tmp_path: Path):
    config = _write(tmp_path / "config.toml", f'expose = ["{home}/.config/tool"]\n')
    env = {**os.environ, **developer_env(home), "NAVTUI_CONFIG": str(config)}
    result = subprocess.run([sys.executable, "-m", "app.cli", "doctor"], capture_output=True,
                            text=True, env=env, timeout=120)
    sandbox = lines_after(result.stdout, "sandbox")
    assert sandbox[0].startswith("✓ sandbox"), result.stdout
    assert "read-only inside besides the system directories: " in sandbox[1]
    assert all(f in sandbox[1] for f in ("~/.pyenv", "~/.local/bin", "~/.config/tool"))
    assert "never shown" in sandbox[2]
    assert all(f in sandbox[2] for f in ("~/.ssh", "~/.bash_history", "~/.config/gh",
                                          "~/.config/navtui"))

    config.write_text(f'expose = ["{home}/.ssh"]\n')
    refused = subprocess.run([sys.executable, "-m", "app.cli", "doctor"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert refused.returncode == 1
    sandbox = lines_after(refused.stdout, "sandbox")
    assert sandbox[0].startswith("✗ sandbox") and "never shows credentials" in sandbox[1]


def _socket_dir() -> Path:
    """A directory outside /tmp, /run and the system directories, as LXD's or nix-daemon's."""
    for parent in ("/srv", "/"):
        try:
            return Path(tempfile.mkdtemp(prefix="navtui-sock-", dir=parent))
        except OSError:
            continue
    return Path(tempfile.mkdtemp(prefix="navtui-sock-", dir="/var/tmp"))


@needs_bwrap
def test_a_host_unix_socket_outside_the_system_directories_is_unreachable(git_repo: Path):
    directory = _socket_dir()
    path = directory / "daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    connect = (f"{sys.executable} -c \"import socket; s = socket.socket(socket.AF_UNIX); "
               f"s.connect('{path}'); print('connected')\"")
    try:
        assert subprocess.run(connect, shell=True, capture_output=True, text=True,
                              timeout=30).stdout == "connected\n"  # it works outside
        sandbox = Bubblewrap(git_repo, check_sandbox().bwrap)  # shows navtui's own Python
        with Shell(git_repo, timeout=30, launcher=sandbox) as sh:
            obs = sh.run(connect)
        assert obs.exit_code != 0 and "connected" not in obs.output, obs
        assert "FileNotFoundError" in obs.output
        assert len(accepted) == 1
    finally:
        server.close()
        shutil.rmtree(directory, ignore_errors=True)


@needs_bwrap
def test_a_repository_venv_runs_with_its_base_interpreter_under_home(git_repo: Path, home: Path):
    """`.venv/bin/python` links to an installation under HOME (a uv- or pyenv-managed Python)
    that is on no PATH: the sandbox shows that installation, not the rest of the home."""
    base = home / ".local/share/uv/python/cpython-3.11"
    _write(base / "bin/python3.11", f'#!/bin/sh\nexec {sys.executable} "$@"\n', 0o755)
    _write(base / "lib/python3.11/os.py", "")
    venv = git_repo / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin/python").symlink_to(base / "bin/python3.11")
    _write(venv / "pyvenv.cfg", f"home = {base}/bin\n")
    planted = git_repo / "planted-venv"
    _write(planted / "pyvenv.cfg", f"home = {home}/.ssh\n")  # a hostile repo's try
    (home / ".ssh/python3").write_text("not a python\n")
    check = check_sandbox()
    sandbox = Bubblewrap(git_repo, check.bwrap, environ=developer_env(home))
    assert str(base) in sandbox.exposure.paths
    assert not any(".ssh" in path for path in sandbox.exposure.paths)
    with Shell(git_repo, timeout=30, launcher=sandbox) as sh:
        assert sh.run(".venv/bin/python -c 'print(6 * 7)'").output == "42\n"
        assert sh.run(f"cat {home}/.ssh/id_rsa").exit_code != 0
