"""The bubblewrap sandbox on real bwrap: /testbed is the repo, nothing else is writable, no
network, no secrets, no leftover processes; `auto` falls back cleanly when bwrap cannot run."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.actions import Bash
from agent_core.executor import Executor
from agent_core.executor.sandbox import (
    Bubblewrap,
    Plain,
    SandboxError,
    SandboxSettings,
    check_sandbox,
    is_secret_name,
    resolve_sandbox,
)
from agent_core.executor.shell import Shell
from tests.fixtures.repos import git, tree_state

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap needs Linux")


def _user_namespaces_work() -> bool:
    """Whether this host lets us create user, pid and network namespaces at all (checked
    without bwrap, so a bwrap that fails where they work fails the tests)."""
    unshare = shutil.which("unshare")
    if sys.platform != "linux" or unshare is None:
        return sys.platform == "linux"
    return subprocess.run([unshare, "-U", "-p", "-n", "-f", "true"],
                          capture_output=True).returncode == 0


needs_bwrap = pytest.mark.skipif(
    not _user_namespaces_work(),
    reason="this host forbids user namespaces (e.g. a container's seccomp profile or Ubuntu's "
    "AppArmor restriction): the sandbox cannot run here, `auto` falls back",
)

SECRETS = {
    "OPENAI_API_KEY": "sk-navtui-test-openai",
    "NAVTUI_API_KEY": "navtui-test-key",
    "GITHUB_TOKEN": "ghp_navtui_test",
    "AWS_SECRET_ACCESS_KEY": "aws-navtui-test",
}


def sandboxed(repo: Path, **options) -> Bubblewrap:
    launcher, notice = resolve_sandbox(SandboxSettings(mode="on", **options), repo)
    assert isinstance(launcher, Bubblewrap) and notice is None
    return launcher


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A directory outside /tmp (which the sandbox replaces), visible read-only inside."""
    path = Path(tempfile.mkdtemp(prefix="navtui-sandbox-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def shell(git_repo: Path) -> Iterator[Shell]:
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo)) as sh:
        yield sh


def _alive_with(argument: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains `argument`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argument.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


@needs_bwrap
def test_bwrap_works_here():
    check = check_sandbox()
    assert check.available, check.reason


@needs_bwrap
def test_testbed_is_the_repo_and_edits_land(shell: Shell, git_repo: Path):
    assert shell.run("pwd").output == "/testbed\n"
    assert shell.run("cat calc/ops.py").output == (git_repo / "calc/ops.py").read_text()
    assert shell.run("echo made inside > /testbed/new.txt && cd calc && pwd").exit_code == 0
    assert (git_repo / "new.txt").read_text() == "made inside\n"
    assert shell.cwd == Path("/testbed/calc")


@needs_bwrap
def test_writes_outside_the_repo_never_reach_the_machine(shell: Shell, git_repo: Path,
                                                         outside_dir: Path):
    obs = shell.run(f"touch {outside_dir}/escaped; echo $? ; touch /usr/navtui-escaped; echo $?")
    # /usr is there read-only; /var/tmp (like /srv, /home, /mnt) is the sandbox's own.
    assert obs.output.count("Read-only file system") == 1 and "No such file" in obs.output
    assert not (outside_dir / "escaped").exists() and not Path("/usr/navtui-escaped").exists()
    # /tmp and $HOME are writable, but private: gone with the sandbox.
    marker = f"navtui-{os.getpid()}-{time.monotonic_ns()}"
    obs = shell.run(f"echo x > /tmp/{marker} && echo x > ~/{marker} && cat /tmp/{marker} ~/{marker}")
    assert obs.output == "x\nx\n", obs
    assert not Path("/tmp", marker).exists()
    assert not Path(os.environ["HOME"], marker).exists()
    # The repository's real path (read-only when visible at all) is not a way around /testbed.
    shell.run(f"echo x > {git_repo}/via-real-path")
    assert not (git_repo / "via-real-path").exists()


@needs_bwrap
def test_root_cannot_remount_its_way_out(shell: Shell):
    obs = shell.run("mount -o remount,rw /usr; grep CapEff /proc/self/status")
    assert obs.output.rstrip().endswith("CapEff:\t0000000000000000")


def _listener() -> tuple[socket.socket, list[socket.socket]]:
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    return server, accepted


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
def test_a_server_on_the_machines_loopback_is_unreachable_without_network(git_repo: Path,
                                                                         network: bool):
    server, accepted = _listener()
    port = server.getsockname()[1]
    try:
        with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo, network=network)) as sh:
            obs = sh.run(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        if network:
            assert obs.output == "connected\n"
            deadline = time.monotonic() + 5
            while not accepted and time.monotonic() < deadline:
                time.sleep(0.01)
            assert accepted
        else:
            assert "Connection refused" in obs.output and obs.exit_code != 0
            assert not accepted
    finally:
        server.close()


@needs_bwrap
def test_setsid_daemons_die_with_the_session(git_repo: Path):
    marker = f"1000.{os.getpid()}{time.monotonic_ns() % 10**6}"
    sh = Shell(git_repo, timeout=10, launcher=sandboxed(git_repo))
    sh.run(f"setsid sleep {marker} > /dev/null 2>&1 & nohup sleep {marker} > /dev/null 2>&1 &")
    deadline = time.monotonic() + 5
    while len(_alive_with(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(_alive_with(marker)) == 2
    sh.close()
    assert _alive_with(marker) == []


@needs_bwrap
def test_timeout_kills_everything_and_the_new_shell_is_still_inside(git_repo: Path):
    marker = f"2000.{os.getpid()}{time.monotonic_ns() % 10**6}"
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo)) as sh:
        sh.run("cd calc && export KEPT=yes")
        obs = sh.run(f"setsid sleep {marker} & sleep {marker}", timeout=1)
        assert "timed out after 1 s" in obs.error and "/testbed/calc" in obs.error
        assert _alive_with(marker) == []
        after = sh.run("pwd; echo $KEPT; touch /usr/x 2>&1 | grep -c Read-only")
        assert after.output == "/testbed/calc\nyes\n1\n"


@needs_bwrap
def test_the_users_home_and_secrets_stay_outside(git_repo: Path, outside_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    (outside_dir / ".ssh").mkdir()
    (outside_dir / ".ssh/id_ed25519").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(outside_dir))
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NAVTUI_HARMLESS", "kept-outside-only")
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo)) as sh:
        assert sh.run("echo $HOME; ls -A ~ | wc -l").output == f"{outside_dir}\n0\n"
        assert "No such file" in sh.run(f"cat {outside_dir}/.ssh/id_ed25519").output
        # Only the toolchain (PATH, navtui's own Python, e.g. ~/.pyenv) shows in the real home.
        real_home = pwd.getpwuid(os.getuid()).pw_dir
        kept = {Path(p).relative_to(real_home).parts[0] for p in sh.launcher.exposure.paths
                if Path(p).is_relative_to(real_home)}
        assert set(sh.run(f"ls -A {real_home}").output.split()) == kept
        env = sh.run("env").output
    for name, value in SECRETS.items():
        assert name not in env and value not in env
    assert "NAVTUI_HARMLESS" not in env and "PATH=" in env and "HOME=" in env


def test_secrets_are_stripped_without_the_sandbox_too(git_repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NAVTUI_HARMLESS", "passed")
    with Shell(git_repo, timeout=10, launcher=Plain(git_repo)) as sh:
        env = sh.run("env").output
    for name, value in SECRETS.items():
        assert name not in env and value not in env
    assert "NAVTUI_HARMLESS=passed" in env


def test_secret_names():
    for name in ("OPENAI_API_KEY", "NAVTUI_API_KEY", "HF_TOKEN", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY",
                 "AWS_SESSION_TOKEN", "DB_PASSWORD", "SSH_AUTH_SOCK", "ANTHROPIC_API_KEY",
                 "MY_APIKEY", "GOOGLE_APPLICATION_CREDENTIALS", "npm_config__auth"):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "LANG", "TERM", "VIRTUAL_ENV", "TOKENIZERS_PARALLELISM",
                 "KEYBOARD_LAYOUT", "PYTHONPATH", "XAUTHORITY"):
        assert not is_secret_name(name), name


@needs_bwrap
def test_git_works_inside_on_a_repo_owned_by_someone_else(git_repo: Path):
    (git_repo / "calc/ops.py").write_text("changed\n")
    if os.getuid() == 0:
        subprocess.run(["chown", "-R", "12345:12345", str(git_repo)], check=True)
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo)) as sh:
        status = sh.run("git status --short")
        diff = sh.run("git diff --stat")
    assert status.output == " M calc/ops.py\n", status
    assert "calc/ops.py" in diff.output


@needs_bwrap
def test_writable_paths_are_writable_and_checked(git_repo: Path, outside_dir: Path):
    cache = outside_dir / "cache"
    cache.mkdir()
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo, writable=(cache,))) as sh:
        assert sh.run(f"echo kept > {cache}/file").exit_code == 0
    assert (cache / "file").read_text() == "kept\n"
    with pytest.raises(SandboxError, match="--writable .*no such directory"):
        sandboxed(git_repo, writable=(outside_dir / "missing",))


@needs_bwrap
def test_executor_runs_commands_as_written_and_says_where(git_repo: Path):
    with Executor(git_repo, command_timeout=10, launcher=sandboxed(git_repo)) as ex:
        prepared = ex.prepare(Bash("cat /testbed/calc/ops.py | head -1"))
        assert prepared.command_shown == "cat /testbed/calc/ops.py | head -1"
        assert ex.execute(prepared.action).output == "def add(a, b):\n"
        shown = f"in sandbox: /testbed = {git_repo.resolve()}, network off"
        home = os.environ["HOME"].rstrip("/")
        exposed = [p.replace(home, "~", 1) if p.startswith(home + "/") else p
                   for p in ex.launcher.exposure.paths]
        assert ex.where == shown + (f", read-only: {', '.join(exposed)}" if exposed else "")
    with Executor(git_repo, command_timeout=10) as plain:
        assert plain.prepare(Bash("cat /testbed/x")).command_shown == f"cat {git_repo.resolve()}/x"
        assert plain.where == ""


def _fake_bwrap(directory: Path) -> str:
    fake = directory / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    return str(fake)


def test_auto_falls_back_with_one_clear_notice_when_bwrap_cannot_start(git_repo: Path,
                                                                       tmp_path: Path):
    fake = _fake_bwrap(tmp_path)
    launcher, notice = resolve_sandbox(SandboxSettings(mode="auto", bwrap=fake), git_repo)
    assert isinstance(launcher, Plain) and launcher.notice == notice
    assert launcher.label == "no sandbox"
    assert notice is not None and notice.startswith("sandbox off: ")
    assert "No permissions to create a new namespace" in notice and "as you" in notice
    with pytest.raises(SandboxError, match="--sandbox on.*No permissions.*--sandbox off"):
        resolve_sandbox(SandboxSettings(mode="on", bwrap=fake), git_repo)
    assert resolve_sandbox(SandboxSettings(mode="off", bwrap=fake), git_repo)[1] is None
    check = check_sandbox(fake)
    assert not check.available and "namespace" in check.reason


def test_the_bwrap_env_var_chooses_the_binary(git_repo: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("NAVTUI_BWRAP", _fake_bwrap(tmp_path))
    launcher, notice = resolve_sandbox(SandboxSettings(), git_repo)
    assert isinstance(launcher, Plain) and "cannot create a sandbox" in notice


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="switching to an unprivileged user needs root and setpriv")
@needs_bwrap
def test_the_same_sandbox_works_for_an_unprivileged_user(git_repo: Path, outside_dir: Path):
    """What a normal user gets: bwrap through unprivileged user namespaces, no root anywhere;
    the model's git commits in its own view of the git dir, which stays as it was."""
    outside_dir.chmod(0o755)
    repo = outside_dir / "user-repo"
    shutil.copytree(git_repo, repo)
    private, views = outside_dir / "private", outside_dir / "views"
    private.mkdir()
    views.mkdir()
    launcher = Bubblewrap(repo, check_sandbox().bwrap, readable=(), git_views=views,
                          environ={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert launcher.git_view_problem is None
    argv = launcher.argv(["sh", "-c", "id -u; pwd; touch /usr/x; echo ok > /testbed/by-user; "
                          "git status --short; git add by-user && git -c user.name=m "
                          "-c user.email=m@x.invalid commit -qm mine && git log --format=%s -1; "
                          "ln -s /usr .git/outside; mkdir .git/shut && chmod 000 .git/shut "
                          ".git/objects/*/"], private)
    # (the views navtui made, as the user would own them)
    subprocess.run(["chown", "-R", "65534:65534", str(repo), str(private), str(views)], check=True)
    before = tree_state(repo / ".git")
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
                          capture_output=True, text=True, env=launcher.environment(), timeout=30)
    assert done.stdout.splitlines()[:2] == ["65534", "/testbed"], done.stderr
    assert "Read-only file system" in done.stderr
    assert (repo / "by-user").read_text() == "ok\n"
    assert done.stdout.splitlines()[2:] == ["?? by-user", "mine"], done.stderr
    assert tree_state(repo / ".git") == before
    # The user's navtui removes the views, whatever modes and links the model left in them.
    removed = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              sys.executable, "-c", "import sys; from agent_core.executor."
                              "git_views import _remove; from pathlib import Path; "
                              "_remove(Path(sys.argv[1]))", str(launcher._views.path)],
                             capture_output=True, text=True, timeout=30)
    assert removed.returncode == 0, removed.stderr
    assert list(views.iterdir()) == [] and Path("/usr/bin").is_dir()


@needs_bwrap
def test_git_config_and_hooks_planted_inside_stay_in_the_models_view(git_repo: Path):
    config = (git_repo / ".git/config").read_text()
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo)) as sh:
        planted = sh.run("git config core.fsmonitor 'touch /testbed/pwned; false'; "
                         "echo 'touch /testbed/pwned' > .git/hooks/post-checkout; "
                         "mv .git .git-aside; ls -a | grep -c git-aside")
        assert planted.output.endswith("0\n"), planted
        # Everyday git still works, in the model's own view of the git dir.
        sh.run("git config --unset core.fsmonitor; echo new > added.txt")
        assert sh.run("git add added.txt && git diff --cached --name-only").output == "added.txt\n"
    assert (git_repo / ".git/config").read_text() == config
    assert not (git_repo / ".git/hooks/post-checkout").exists()
    assert (git_repo / ".git").is_dir() and not (git_repo / ".git-aside").exists()
    assert git(git_repo, "diff", "--cached", "--name-only") == ""


@needs_bwrap
def test_a_shell_started_from_a_thread_that_ended_stays_alive(git_repo: Path):
    """The TUI starts shells from worker threads; the sandbox must outlive them."""
    started: list[Shell] = []
    worker = threading.Thread(target=lambda: started.append(
        Shell(git_repo, timeout=10, launcher=sandboxed(git_repo))))
    worker.start()
    worker.join()
    with started[0] as sh:
        time.sleep(0.3)  # the parent-death signal would have arrived by now
        obs = sh.run("echo alive")
        assert (obs.output, obs.error) == ("alive\n", None)
        # A restart from yet another thread that ends is just as safe.
        restarter = threading.Thread(target=sh.restart)
        restarter.start()
        restarter.join()
        time.sleep(0.3)
        assert sh.run("echo still").output == "still\n"


@needs_bwrap
def test_git_works_in_a_linked_worktree_whose_main_repo_is_hidden(git_repo: Path, tmp_path: Path):
    worktree = tmp_path / "feature"
    subprocess.run(["git", "-C", str(git_repo), "worktree", "add", "-q", "-b", "feature",
                    str(worktree)], check=True)
    config = (git_repo / ".git/config").read_text()
    (worktree / "calc/ops.py").write_text("changed\n")
    with Shell(worktree, timeout=10, launcher=sandboxed(worktree)) as sh:
        assert sh.run("git status --short").output == " M calc/ops.py\n"
        assert sh.run("git add -A && git diff --cached --name-only").output == "calc/ops.py\n"
        assert sh.run("git rev-parse --abbrev-ref HEAD").output == "feature\n"
        assert "No such file" in sh.run("ls /testbed/../repo/calc 2>&1; "
                                        f"ls {git_repo}/calc").output
        sh.run("git config core.fsmonitor 'touch /testbed/pwned'")
    assert (git_repo / ".git/config").read_text() == config
    # What the model staged is in its own view only.
    assert git(worktree, "diff", "--cached", "--name-only") == ""


@needs_bwrap
def test_the_active_venv_under_the_hidden_home_still_runs(git_repo: Path, outside_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    """A venv inside the repo, the repo inside $HOME: its scripts (shebangs with real paths) run,
    and it stays writable like the repo."""
    repo = outside_dir / "project"
    shutil.copytree(git_repo, repo)
    venv = repo / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool = venv / "bin/tool"
    tool.write_text("#!/bin/sh\necho tool from $VIRTUAL_ENV\n")
    tool.chmod(0o755)
    monkeypatch.setenv("HOME", str(outside_dir))
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:/usr/bin:/bin")
    with Shell(repo, timeout=10, launcher=sandboxed(repo)) as sh:
        assert sh.run("tool").output == f"tool from {venv}\n"
        assert sh.run(f"touch {venv}/installed && ls -A ~ | wc -l").output == "1\n"
    assert (venv / "installed").exists()


@needs_bwrap
def test_a_venv_under_tmp_still_runs_while_the_rest_of_tmp_stays_private(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A CI checkout often lives in /tmp with its venv: the sandbox's private /tmp must not hide
    the interpreter the model's commands run with (read-only), and nothing else of /tmp shows."""
    venv = tmp_path / "checkout-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool = venv / "bin/tool"
    tool.write_text("#!/bin/sh\necho tool from $VIRTUAL_ENV\n")
    tool.chmod(0o755)
    (tmp_path / "beside.txt").write_text("not for the model\n")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:/usr/bin:/bin")
    with Shell(git_repo, timeout=10, launcher=sandboxed(git_repo)) as sh:
        assert sh.run("tool").output == f"tool from {venv}\n"
        assert "Read-only file system" in sh.run(f"touch {venv}/installed").output
        assert "No such file" in sh.run(f"cat {tmp_path}/beside.txt").output
    assert not (venv / "installed").exists()


@needs_bwrap
def test_a_planted_git_file_exposes_nothing(git_repo: Path, outside_dir: Path):
    """A hostile checkout whose .git is a file naming another directory gets no extra mount."""
    (outside_dir / "private.txt").write_text("not for the model\n")
    repo = outside_dir / "checkout"
    repo.mkdir()
    (repo / "file.txt").write_text("x\n")
    (repo / ".git").write_text(f"gitdir: {outside_dir}\n")
    with Shell(repo, timeout=10, launcher=sandboxed(repo)) as sh:
        obs = sh.run(f"echo planted > {outside_dir}/planted; cat {outside_dir}/private.txt")
    assert "not for the model" not in obs.output and "No such file" in obs.output
    assert not (outside_dir / "planted").exists()


@needs_bwrap
def test_interrupting_a_command_kills_it_and_the_shell_comes_back_inside(git_repo: Path):
    marker = f"4000.{os.getpid()}{time.monotonic_ns() % 10**6}"
    with Shell(git_repo, timeout=30, launcher=sandboxed(git_repo)) as sh:
        sh.run("cd calc")
        results = []
        runner = threading.Thread(target=lambda: results.append(sh.run(f"sleep {marker}")))
        runner.start()
        deadline = time.monotonic() + 10
        while not _alive_with(marker) and time.monotonic() < deadline:
            time.sleep(0.01)
        sh.interrupt()
        runner.join(timeout=20)
        assert "interrupted" in results[0].error
        assert _alive_with(marker) == []
        assert sh.run("pwd").output == "/testbed/calc\n"
