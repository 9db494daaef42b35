"""Confinement: file tools never reach outside the repository; /testbed maps onto it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor
from agent_core.executor import Executor
from agent_core.executor.paths import Confinement, PathError, rewrite_alias


@pytest.fixture
def executor(git_repo: Path):
    with Executor(git_repo, command_timeout=5) as ex:
        yield ex


def test_read_dotdot_etc_passwd_refused(executor: Executor):
    obs = executor.execute(Read("../../etc/passwd"))
    assert obs.output == ""
    assert "outside the repository" in obs.error and "root:" not in obs.error


@pytest.mark.parametrize("action", [
    Read("/etc/passwd"),
    StrReplaceEditor("view", "/etc"),
    StrReplaceEditor("create", "/tmp/navtui-escape.txt", file_text="x"),
    Edit("../outside.txt", 1, 0, "x"),
    Search("root", "/etc"),
])
def test_absolute_and_dotdot_paths_outside_refused(executor: Executor, action, git_repo: Path):
    obs = executor.execute(action)
    assert obs.error and "outside the repository" in obs.error
    assert not Path("/tmp/navtui-escape.txt").exists()
    assert not (git_repo.parent / "outside.txt").exists()


def test_symlink_to_etc_refused_for_every_tool(executor: Executor, git_repo: Path):
    os.symlink("/etc", git_repo / "etc_link")
    os.symlink("/etc/hostname", git_repo / "host_link")
    for action in (Read("etc_link/passwd"), Read("host_link"), StrReplaceEditor("view", "etc_link"),
                   StrReplaceEditor("create", "etc_link/navtui-evil", file_text="x"),
                   StrReplaceEditor("str_replace", "host_link", old_str="a", new_str="b"),
                   Search("root", "etc_link")):
        obs = executor.execute(action)
        assert "symlink leading outside the repository" in obs.error, action
    assert not Path("/etc/navtui-evil").exists()


def test_symlink_and_dotdot_inside_repo_allowed(executor: Executor, git_repo: Path):
    os.symlink(git_repo / "calc", git_repo / "calc_link")
    assert "def add" in executor.execute(Read("calc_link/ops.py")).output
    assert "def add" in executor.execute(Read("tests/../calc/ops.py")).output


def test_testbed_alias_maps_onto_root_for_file_tools(executor: Executor, git_repo: Path):
    assert "def add" in executor.execute(Read("/testbed/calc/ops.py")).output
    assert "calc/" in executor.execute(StrReplaceEditor("view", "/testbed")).output
    executor.execute(StrReplaceEditor("create", "/testbed/new.txt", file_text="hi\n"))
    assert (git_repo / "new.txt").read_text() == "hi\n"
    assert "calc/ops.py:5" in executor.execute(Search("def average", "/testbed")).output


def test_absolute_path_inside_repo_allowed(executor: Executor, git_repo: Path):
    assert "def add" in executor.execute(Read(str(git_repo / "calc/ops.py"))).output


def test_cd_slash_then_relative_read_still_reads_the_repo(executor: Executor):
    assert executor.execute(Bash("cd /")).exit_code == 0
    assert executor.execute(Bash("pwd")).output == "/\n"
    obs = executor.execute(Read("calc/ops.py"))
    assert obs.error is None and "def average" in obs.output


def test_bash_alias_rewritten_visibly_and_runs(executor: Executor, git_repo: Path):
    prepared = executor.prepare(Bash("cd /testbed && cat /testbed/README.md | head -1"))
    assert prepared.command_shown == f"cd {git_repo} && cat {git_repo}/README.md | head -1"
    assert prepared.action.command == prepared.command_shown
    assert executor.execute(Bash("cat /testbed/README.md | head -1")).output == "# calc\n"


def test_alias_rewrite_only_touches_whole_path_components(tmp_path: Path):
    root = tmp_path / "r"
    command = "ls /testbed /testbed/a '/testbed' /testbedx /x/testbed ~/testbed $HOME/testbed"
    assert rewrite_alias(command, root, "/testbed") == (
        f"ls {root} {root}/a '{root}' /testbedx /x/testbed ~/testbed $HOME/testbed"
    )
    assert rewrite_alias("ls /testbed", root, "") == "ls /testbed"


def test_configurable_alias(git_repo: Path):
    paths = Confinement(git_repo, "/workspace/")
    assert paths.resolve("/workspace/calc/ops.py") == git_repo / "calc/ops.py"
    with pytest.raises(PathError, match="under /workspace/"):
        paths.resolve("/testbed/calc/ops.py")
    with Executor(git_repo, path_alias="/workspace") as ex:
        assert ex.prepare(Bash("ls /workspace")).command_shown == f"ls {git_repo}"
        assert ex.prepare(Bash("ls /testbed")).command_shown == "ls /testbed"


def test_empty_path_refused(git_repo: Path):
    with pytest.raises(PathError, match="empty path"):
        Confinement(git_repo).resolve("  ")


@pytest.mark.parametrize("name", ["my repo", "it's \"quoted\" $HOME `x` \\ dir"])
def test_alias_rewrite_quotes_a_root_with_spaces_and_quotes(tmp_path: Path, name: str):
    root = tmp_path / name
    root.mkdir()
    (root / "README.md").write_text("# calc\n")
    commands = [
        "cat /testbed/README.md",
        "cd /testbed && cat README.md",
        "cat '/testbed/README.md'",
        'cat "/testbed/README.md"',
        "cat $'/testbed/README.md'",
        "cat /testbed/'README.md'",
        'cat "$(echo /testbed/README.md)"',
        "(cd /testbed; cat README.md)",
    ]
    with Executor(root, command_timeout=5) as ex:
        for command in commands:
            prepared = ex.prepare(Bash(command))
            assert "/testbed" not in prepared.command_shown
            assert ex.execute(Bash(command)).output == "# calc\n", (command, prepared.command_shown)
        # Here-document bodies get the path as is: literal text, not shell words.
        for heredoc in (
            "cat <<EOF\n/testbed/README.md\nEOF",
            "cat <<'EOF'\n/testbed/README.md\nEOF",
            "cat <<-\\EOF\n\t/testbed/README.md\n\tEOF\n",
        ):
            assert ex.execute(Bash(heredoc)).output == f"{root}/README.md\n", heredoc
    assert rewrite_alias("echo $((1<<2)) /testbed", root, "/testbed").startswith("echo $((1<<2)) '")
