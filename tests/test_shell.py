"""The persistent bash: real bash in a pty, real processes, short timeouts."""

from __future__ import annotations

import gc
import re
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from agent_core.executor.shell import Shell


@pytest.fixture
def shell(git_repo: Path):
    with Shell(git_repo, timeout=5, output_limit=2_000) as sh:
        yield sh


def _gone(pid: int, within: float = 3.0) -> bool:
    """True once `pid` no longer exists (or is a zombie waiting to be reaped)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


def test_cwd_and_environment_persist(shell: Shell, git_repo: Path):
    assert shell.run("cd calc && export NAVTUI_X=42").exit_code == 0
    obs = shell.run("pwd; echo $NAVTUI_X")
    assert obs.output == f"{git_repo / 'calc'}\n42\n"
    assert shell.cwd == git_repo / "calc"


def test_exit_code_and_stderr_are_reported(shell: Shell):
    obs = shell.run("echo out; echo err >&2; exit_status() { return 3; }; exit_status")
    assert obs.exit_code == 3
    assert "out\n" in obs.output and "err\n" in obs.output
    assert obs.error is None


def test_output_is_exact_without_trailing_newline_or_carriage_returns(shell: Shell):
    assert shell.run("printf abc").output == "abc"
    assert shell.run("printf 'a\\nb\\n'").output == "a\nb\n"


def test_multiline_command_and_heredoc(shell: Shell):
    obs = shell.run("cat <<'EOF'\nline one\n$HOME stays literal\nEOF\nfor i in 1 2; do echo $i; done")
    assert obs.output == "line one\n$HOME stays literal\n1\n2\n"


def test_syntax_error_is_an_observation_and_shell_survives(shell: Shell):
    obs = shell.run('echo "unterminated')
    assert obs.exit_code == 2
    assert "unexpected EOF" in obs.output
    assert "navtui-shell" not in obs.output
    assert shell.run("echo fine").output == "fine\n"


def test_sleep_1000_times_out_kills_group_and_restarts_in_same_cwd(git_repo: Path, tmp_path: Path):
    pidfile = tmp_path / "sleep.pid"
    with Shell(git_repo, timeout=5) as sh:
        sh.run("cd calc && export KEPT='a b' && GONE=1")
        started = time.monotonic()
        obs = sh.run(f"echo before; sleep 1000 & echo $! > {pidfile}; sleep 1000", timeout=1)
        elapsed = time.monotonic() - started
        assert elapsed < 4
        assert obs.exit_code is None
        assert "timed out after 1 s" in obs.error and "new shell" in obs.error
        assert obs.output == "before\n"
        assert _gone(int(pidfile.read_text()))
        after = sh.run("pwd; echo ${GONE:-unset} $KEPT")
        assert after.exit_code == 0
        assert after.output == f"{git_repo / 'calc'}\nunset a b\n"


def test_yes_flood_is_capped_and_memory_bounded(git_repo: Path):
    with Shell(git_repo, timeout=1, output_limit=4_000) as sh:
        tracemalloc.start()
        try:
            obs = sh.run("yes")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert "timed out" in obs.error
        assert obs.truncated
        elided = int(re.search(r"\[\.\.\. (\d+) bytes of output elided", obs.output).group(1))
        assert elided > 1_000_000  # a real flood went through ...
        assert len(obs.output) < 4_000 + 300
        assert peak < 2_000_000  # ... while Python held a few hundred KB at most
        assert obs.output.startswith("y\ny\n") and obs.output.rstrip().endswith("y")
        assert sh.run("echo alive").output == "alive\n"


def test_large_finite_output_keeps_head_and_tail(shell: Shell):
    obs = shell.run("seq 1 100000")
    assert obs.exit_code == 0 and obs.truncated
    assert obs.output.startswith("1\n2\n3\n")
    assert obs.output.endswith("99999\n100000\n")
    assert "bytes of output elided" in obs.output


def test_binary_output_becomes_text(shell: Shell):
    obs = shell.run("head -c 20000 /dev/urandom; printf '\\xff\\xfe tail\\n'")
    assert obs.exit_code == 0
    assert "\x00" not in obs.output and "\x1b" not in obs.output
    assert obs.output.endswith("\ufffd\ufffd tail\n")
    obs.output.encode("utf-8")


@pytest.mark.parametrize(
    "command, code",
    [("cat", 0), ("python3", 0), ("python3 -c 'input()'", 1), ("read line", 1), ("head -1", 0)],
)
def test_commands_waiting_on_stdin_get_eof_at_once(shell: Shell, command: str, code: int):
    started = time.monotonic()
    obs = shell.run(command, timeout=20)
    assert obs.error is None, obs.error
    assert obs.exit_code == code
    assert time.monotonic() - started < 10


def test_no_controlling_terminal_so_tty_prompts_fail_fast(shell: Shell):
    obs = shell.run("exec 3</dev/tty", timeout=3)
    assert obs.error is None
    assert "No such device" in obs.output


def test_pagers_and_prompts_are_disabled(shell: Shell):
    obs = shell.run('echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT"; git log --oneline | wc -l')
    assert obs.output == "cat cat 0\n1\n"
    assert shell.run("git --no-pager log -1 --format=%s").output == "initial\n"


def test_exit_restarts_shell(shell: Shell, git_repo: Path):
    shell.run("cd tests")
    obs = shell.run("echo bye; exit 7")
    assert obs.output == "bye\n"
    assert "exited with status 7" in obs.error
    assert shell.run("pwd").output == f"{git_repo / 'tests'}\n"


def test_restart_keeps_cwd_and_replaces_process(shell: Shell, git_repo: Path):
    shell.run("cd calc")
    before = shell.pid
    shell.restart()
    assert shell.pid != before and _gone(before)
    assert shell.run("pwd").output == f"{git_repo / 'calc'}\n"


def test_background_processes_die_with_close(git_repo: Path):
    sh = Shell(git_repo, timeout=5)
    pid = int(sh.run("sleep 1000 >/dev/null 2>&1 & echo $!").output)
    nohup = int(sh.run("nohup sleep 1000 >/dev/null 2>&1 & echo $!").output)
    assert not _gone(pid, within=0.2)
    sh.close()
    assert _gone(pid) and _gone(nohup)
    assert sh.run("echo x").error == "the shell is closed; start a new session"
    sh.close()


def test_interrupt_from_another_thread(shell: Shell):
    timer = threading.Timer(0.3, shell.interrupt)
    timer.start()
    started = time.monotonic()
    obs = shell.run("sleep 1000")
    assert time.monotonic() - started < 3
    assert "interrupted" in obs.error
    assert shell.run("echo ok").output == "ok\n"


def test_pagers_print_and_editors_refuse_instead_of_waiting_for_keys(shell: Shell):
    started = time.monotonic()
    assert shell.run("less -N README.md").output.startswith("# calc\n")
    assert shell.run("printf 'piped\\n' | more").output == "piped\n"
    editor = shell.run("vim calc/ops.py")
    assert editor.exit_code == 1 and "interactive editors cannot run here" in editor.output
    assert time.monotonic() - started < 3
    shell.restart()
    assert shell.run("nano x").exit_code == 1


def test_exit_is_noticed_even_when_a_background_job_holds_the_terminal(shell: Shell):
    pid = int(shell.run("sleep 1000 & echo $!").output)
    started = time.monotonic()
    obs = shell.run("exit 3", timeout=20)
    assert time.monotonic() - started < 10
    assert "exited with status 3" in obs.error
    assert _gone(pid)


def test_set_e_failure_ends_the_shell_with_an_explanation(shell: Shell):
    obs = shell.run("set -e; false; echo not-reached")
    assert "not-reached" not in obs.output and "set -e" in obs.error
    assert shell.run("false; echo reached").output == "reached\n"


def test_command_longer_than_a_terminal_line(shell: Shell, git_repo: Path):
    body = "\n".join(f"line {i} " + "x" * 60 for i in range(3_000))
    obs = shell.run(f"cat > big.txt <<'EOF'\n{body}\nEOF\nwc -l < big.txt")
    assert obs.output == "3000\n"
    assert (git_repo / "big.txt").read_text() == body + "\n"


def test_private_files_removed_on_close_and_when_dropped(git_repo: Path):
    sh = Shell(git_repo, timeout=5)
    private = Path(sh.run("echo $BASH_SOURCE").output.strip()).parent
    assert private.name.startswith("navtui-shell-") and private.is_dir()
    sh.close()
    assert not private.exists()
    dropped = Shell(git_repo, timeout=5)
    private = Path(dropped.run("echo $BASH_SOURCE").output.strip()).parent
    del dropped
    gc.collect()
    assert not private.exists()


def test_exported_variables_from_any_kind_of_change_survive_a_restart(shell: Shell, tmp_path: Path):
    env_file = tmp_path / "env.sh"
    env_file.write_text("export FROM_FILE=sourced\n")
    shell.run(f"export A=1 B=gone; . {env_file}")
    shell.run("A=2; unset B")  # an assignment to an exported variable changes the environment too
    shell.run("echo $A")
    shell.restart()
    assert shell.run('echo "$A ${B:-unset} $FROM_FILE"').output == "2 unset sourced\n"
