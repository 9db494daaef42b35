"""`navtui --auto --sandbox on|auto|off` end to end: a real process, real bwrap, a scripted model."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.executor import READ_ONLY_GIT_NOTE
from tests.fixtures.repos import tree_state
from tests.test_cli import ISSUE, navtui
from tests.test_sandbox import _alive_with, needs_bwrap
from tests.test_session import CHECK, FIXED_LINE, write_script

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="bubblewrap needs Linux")


@pytest.fixture
def home() -> Iterator[Path]:
    """A $HOME outside /tmp (the sandbox gives /tmp its own), so a leak would be visible."""
    path = Path(tempfile.mkdtemp(prefix="navtui-home-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def observations(stdout: str) -> list[dict]:
    """The observations of the executed steps in `--json` output, in order."""
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [e["record"]["observation"] for e in events if e.get("type") == "StepExecuted"]


@needs_bwrap
def test_a_sandboxed_session_sees_testbed_keeps_the_machine_and_lands_edits(
    git_repo: Path, tmp_path: Path, home: Path
):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)
    port = server.getsockname()[1]
    marker = f"navtui-e2e-{os.getpid()}-{time.monotonic_ns()}"
    script = write_script(tmp_path / "script.jsonl", [
        "Thought: Where am I?\nAction: bash pwd",
        f"Thought: Scratch files.\nAction: bash echo x > /tmp/{marker} && echo x > ~/{marker} "
        f"&& cat /tmp/{marker} ~/{marker}",
        f"Thought: Is the machine reachable?\nAction: bash (exec 3<>/dev/tcp/127.0.0.1/{port}) "
        "&& echo connected || echo unreachable",
        "Thought: Any keys?\nAction: bash env | grep -c -e OPENAI_API_KEY -e NAVTUI_API_KEY",
        f"Thought: Fix it.\nAction: edit calc/ops.py 7 7\n{FIXED_LINE}",
        f"Thought: Check.\nAction: bash {CHECK}",
        "Thought: Done.\nAction: submit",
    ])
    env = {"HOME": str(home), "OPENAI_API_KEY": "sk-e2e-secret", "NAVTUI_API_KEY": "e2e-secret",
           "VIRTUAL_ENV": sys.prefix}
    try:
        result = navtui("--auto", "--json", "--sandbox", "on", "--backend", "replay",
                        "--script", str(script), "--issue", ISSUE, str(git_repo), env=env)
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    seen = [obs["output"] for obs in observations(result.stdout)]
    assert seen[0] == "/testbed\n"
    assert seen[1] == "x\nx\n"
    assert not Path("/tmp", marker).exists() and not (home / marker).exists()
    assert seen[2].endswith("Connection refused\nunreachable\n")
    assert seen[3] == "0\n"
    assert seen[5] == "4.0\n"
    assert (git_repo / "calc/ops.py").read_text().endswith(FIXED_LINE + "\n")
    started = json.loads(result.stdout.splitlines()[0])
    where = started["config"]["sandbox"]
    assert where.startswith(f"in sandbox: /testbed = {git_repo.resolve()}, network off")
    assert f"{home}" not in where  # nothing of the (empty) home is shown


def _fake_bwrap(directory: Path) -> str:
    fake = directory / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    return str(fake)


def test_auto_degrades_with_one_notice_and_on_refuses(git_repo: Path, tmp_path: Path):
    script = write_script(tmp_path / "script.jsonl", ["Thought: .\nAction: bash pwd",
                                                      "Thought: .\nAction: submit"])
    env = {"NAVTUI_BWRAP": _fake_bwrap(tmp_path)}
    common = ("--auto", "--json", "--backend", "replay", "--script", str(script), "--issue", ISSUE)

    auto = navtui(*common, str(git_repo), env=env)
    assert auto.returncode == 0, auto.stderr
    assert auto.stderr.count("sandbox off:") == 1
    assert "setting up uid map: Permission denied" in auto.stderr and "as you" in auto.stderr
    assert observations(auto.stdout)[0]["output"] == f"{git_repo.resolve()}\n"

    refused = navtui(*common, "--sandbox", "on", str(git_repo), env=env)
    assert refused.returncode == 1
    assert "--sandbox on" in refused.stderr and "--sandbox off" in refused.stderr
    assert refused.stdout == ""

    off = navtui(*common, "--sandbox", "off", str(git_repo), env=env)
    assert off.returncode == 0 and "sandbox" not in off.stderr


@needs_bwrap
def test_killing_navtui_takes_the_whole_sandbox_with_it(git_repo: Path, tmp_path: Path):
    marker = f"3000.{os.getpid()}{time.monotonic_ns() % 10**6}"
    script = write_script(tmp_path / "script.jsonl", [
        f"Thought: Start a daemon.\nAction: bash setsid sleep {marker} > /dev/null 2>&1 & "
        f"sleep {marker}",
        "Thought: .\nAction: submit",
    ])
    first = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--auto", "--sandbox", "on", "--backend", "replay",
         "--script", str(script), "--issue", ISSUE, str(git_repo)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while len(_alive_with(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_alive_with(marker)) == 2
        first.kill()
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    deadline = time.monotonic() + 5
    while _alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _alive_with(marker) == []


@needs_bwrap
def test_batch_runs_each_instance_sandboxed_in_its_worktree(git_repo: Path, tmp_path: Path):
    from agent_core.backends.replay import ReplayBackend
    from agent_core.batch import Batch, BatchOptions, Instance
    from agent_core.events import StepExecuted
    from agent_core.executor.sandbox import SandboxSettings
    from agent_core.session import SessionConfig
    from agent_core.trajectory import read_trajectory
    from tests.fixtures.repos import git

    script = write_script(tmp_path / "one.jsonl", [
        "Thought: Where?\nAction: bash pwd; git status --short; git rev-parse --is-inside-work-tree",
        f"Thought: Fix.\nAction: edit calc/ops.py 7 7\n{FIXED_LINE}",
        "Thought: Done.\nAction: submit",
    ])
    instance = Instance("one", git_repo, git(git_repo, "rev-parse", "HEAD").strip(), ISSUE)
    options = BatchOptions(
        output_dir=tmp_path / "out", config=SessionConfig(dialect="text", command_timeout=60.0),
        make_backend=lambda _: ReplayBackend(script), sandbox=SandboxSettings(mode="on"),
    )
    [result] = Batch(options).run([instance])
    assert result.status == "submitted", result.message
    log = read_trajectory(tmp_path / "out/trajectories/one.jsonl")
    assert log.config["sandbox"].startswith("in sandbox: /testbed = ")
    [first, *_] = [e.record for e in log.events if isinstance(e, StepExecuted)]
    assert first.observation.output == "/testbed\ntrue\n"
    assert f"+{FIXED_LINE}" in result.patch


def test_sandbox_settings_come_from_the_config_file_too(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    from app.cli import parse_args

    config = tmp_path / "config.toml"
    config.write_text('sandbox = "on"\nnetwork = true\nwritable = ["/var/cache", "/opt"]\n')
    monkeypatch.setenv("NAVTUI_CONFIG", str(config))
    args = parse_args(["--writable", "/srv", "repo"])
    assert (args.sandbox, args.network, args.writable) == ("on", True, ["/var/cache", "/opt", "/srv"])
    assert parse_args(["--sandbox", "off", "repo"]).sandbox == "off"


@needs_bwrap
@pytest.mark.parametrize("dialect", ["toolcall", "xml", "text"])
def test_each_dialect_fixes_the_bug_inside_the_sandbox(git_repo: Path, tmp_path: Path,
                                                       dialect: str):
    from tests.test_session import FIX_SCRIPTS

    script = write_script(tmp_path / "fix.jsonl", FIX_SCRIPTS[dialect])
    result = navtui("--auto", "--json", "--sandbox", "on", "--backend", "replay", "--dialect",
                    dialect, "--script", str(script), "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    assert (git_repo / "calc/ops.py").read_text().endswith(FIXED_LINE + "\n")
    outputs = "".join(obs["output"] for obs in observations(result.stdout))
    assert str(git_repo.resolve()) not in outputs  # the model only ever sees /testbed


def notices(stdout: str) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [e["message"] for e in events if e.get("type") == "Notice"]


@needs_bwrap
def test_a_nested_repository_the_model_stages_runs_nothing_on_the_users_next_git_status(
    git_repo: Path, tmp_path: Path
):
    """Issue 34, reproduction 1: in the sandbox the model makes a repository with an fsmonitor,
    commits in it and stages it as a gitlink; after the session the user's plain `git status`
    runs nothing, their index lists no gitlink, and they were told about n/.git."""
    marker = tmp_path / "pwned"
    script = write_script(tmp_path / "script.jsonl", [
        "Thought: A nested repository.\nAction: bash mkdir n && cd n && git init -q && git "
        f"config core.fsmonitor 'touch {marker}; false' && git -c user.name=m -c "
        "user.email=m@x.invalid commit -q --allow-empty -m x && cd .. && git add n && "
        "git ls-files -s n",
        "Thought: Still mine?\nAction: bash git ls-files -s n",
        "Thought: Done.\nAction: submit",
    ])
    index = (git_repo / ".git/index").read_bytes()
    result = navtui("--auto", "--json", "--sandbox", "on", "--backend", "replay",
                    "--script", str(script), "--issue", ISSUE, str(git_repo))
    assert result.returncode == 0, result.stderr
    seen = [obs["output"] for obs in observations(result.stdout)]
    # Staged in the model's own view, which outlives the shell restarted to cover n/.git.
    assert seen[0].endswith("\tn\n") and "160000 " in seen[0] and "160000 " in seen[1]
    assert (git_repo / ".git/index").read_bytes() == index
    status = subprocess.run(["git", "status", "--short"], cwd=git_repo, capture_output=True,
                            text=True, check=True)
    assert status.stdout == "?? n/\n" and not marker.exists()
    told = notices(result.stdout)
    assert any("n/.git (made by the model" in notice for notice in told), told
    assert any("leaves .git entries the model made" in notice for notice in told), told


def users_git(repo: Path) -> dict[str, tuple[int, bytes]]:
    """The user's part of the git dir: all but navtui's own state, refs and objects."""
    return {name: value for name, value in tree_state(repo / ".git").items()
            if not name.startswith(("navtui", "objects", "refs/navtui", "logs/refs/navtui"))}


def _bwrap_without_overlays(directory: Path) -> str:
    """A bwrap that starts sandboxes but mounts no overlay, as bubblewrap before 0.11 or a
    kernel before 5.11 would."""
    real = subprocess.run([sys.executable, "-c", "from agent_core.executor.sandbox import "
                           "find_bwrap; print(find_bwrap())"], capture_output=True, text=True,
                          check=True, env={**os.environ, "NAVTUI_BWRAP": ""}).stdout.strip()
    fake = directory / "bwrap"
    fake.write_text("#!/bin/sh\nfor arg; do [ \"$arg\" = --overlay-src ] && "
                    "{ echo 'bwrap: Unknown option --overlay-src' >&2; exit 1; }; done\n"
                    f"exec {real} \"$@\"\n")
    fake.chmod(0o755)
    return str(fake)


@needs_bwrap
def test_without_overlays_the_session_says_so_and_the_models_git_writes_fail_clearly(
    git_repo: Path, tmp_path: Path
):
    script = write_script(tmp_path / "script.jsonl", [
        "Thought: Stage.\nAction: bash echo x > x.txt && git add x.txt",
        "Thought: Done.\nAction: submit",
    ])
    before = users_git(git_repo)
    env = {"NAVTUI_BWRAP": _bwrap_without_overlays(tmp_path)}
    result = navtui("--auto", "--json", "--sandbox", "on", "--backend", "replay",
                    "--script", str(script), "--issue", ISSUE, str(git_repo), env=env)
    assert result.returncode == 0, result.stderr
    assert "the model's git works read-only" in result.stderr
    assert "Unknown option --overlay-src" in result.stderr
    [staged] = observations(result.stdout)[:1]
    assert "Read-only file system" in staged["output"]
    assert staged["error"] == READ_ONLY_GIT_NOTE
    assert users_git(git_repo) == before
    doctor = subprocess.run([sys.executable, "-m", "app.cli", "doctor"], capture_output=True,
                            text=True, env={**os.environ, **env}, timeout=120)
    assert "your git dirs: read-only in the sandbox" in doctor.stdout
