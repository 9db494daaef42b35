"""PathMap: the model sees /testbed, the user real paths; a mounted sandbox needs no mapping."""

from __future__ import annotations

from pathlib import Path

from agent_core.actions import Bash, StrReplaceEditor
from agent_core.executor import Executor, PathMap


def test_outputs_show_the_alias_and_commands_run_on_the_real_root(git_repo: Path):
    with Executor(git_repo, command_timeout=30) as executor:
        paths = executor.path_map
        command = executor.prepare(Bash("cd /testbed && pwd")).action.command
        assert command == f"cd {git_repo.resolve()} && pwd"
        output = executor.execute(Bash("cd /testbed && pwd && ls -d $PWD/calc")).output
        assert output == f"{git_repo.resolve()}\n{git_repo.resolve()}/calc\n"
        assert paths.to_model(output) == "/testbed\n/testbed/calc\n"
        assert paths.to_user("/testbed/calc/ops.py") == f"{git_repo.resolve()}/calc/ops.py"


def test_a_longer_sibling_path_is_not_mapped(tmp_path: Path):
    root = tmp_path / "repo"
    root.mkdir()
    paths = PathMap(root, "/testbed")
    assert paths.to_model(f"{root}2/x {root}-old {root}/x {root}") == (
        f"{root}2/x {root}-old /testbed/x /testbed"
    )


def test_the_root_through_a_symlink_is_mapped_too(tmp_path: Path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    paths = PathMap(tmp_path / "link", "/testbed")
    assert paths.to_model(f"{tmp_path}/link/a {real}/b") == "/testbed/a /testbed/b"


def test_file_tools_answer_with_the_alias(git_repo: Path):
    with Executor(git_repo) as executor:
        created = executor.execute(StrReplaceEditor(command="create", path="repro.py", file_text="x\n"))
        assert created.output == "File created successfully at: /testbed/repro.py"
        missing = executor.execute(StrReplaceEditor(command="view", path="/testbed/nope.py"))
        assert missing.error == "The path /testbed/nope.py does not exist. Please provide a valid path."


def test_mounted_means_no_rewriting(git_repo: Path):
    paths = PathMap(git_repo, "/testbed", mounted=True)
    assert paths.command_to_real("cat /testbed/a") == "cat /testbed/a"
    assert paths.to_model("/testbed/a") == "/testbed/a"
    # the host root, should a sandboxed command print it, is still shown as /testbed
    assert paths.to_model(f"gitdir: {git_repo.resolve()}/.git") == "gitdir: /testbed/.git"
    with Executor(git_repo, path_map=paths) as executor:
        assert executor.prepare(Bash("ls /testbed")).action.command == "ls /testbed"
        # file tools still resolve /testbed paths onto the real root
        view = executor.execute(StrReplaceEditor(command="view", path="/testbed/calc/ops.py"))
        assert view.output.startswith("Here's the result of running `cat -n` on /testbed/calc/ops.py:\n")
