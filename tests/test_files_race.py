"""File tools open relative to the repository root, component by component, never following a
symlink: one swapped in after the path was checked cannot redirect a write outside the repo, and
a symlink loop is an observation, not a crash."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

import pytest

from agent_core.actions import Edit, Read, Search, StrReplaceEditor
from agent_core.executor import Executor
from agent_core.executor.files import FileTools
from agent_core.executor.paths import Confinement, PathError

_libc = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@pytest.fixture
def executor(git_repo: Path):
    with Executor(git_repo, command_timeout=30) as executor:
        yield executor


def swap_in_symlink(directory: Path, target: Path) -> Path:
    """Move `directory` aside and put a symlink to `target` in its place; returns where it went."""
    aside = directory.with_name(directory.name + ".aside")
    directory.rename(aside)
    directory.symlink_to(target, target_is_directory=True)
    return aside


def test_a_symlink_swapped_in_after_planning_does_not_redirect_a_create(git_repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (git_repo / "pkg").mkdir()
    tools = FileTools(Confinement(git_repo))
    change = tools.plan(StrReplaceEditor(command="create", path="pkg/new.py", file_text="x = 1\n"))
    swap_in_symlink(git_repo / "pkg", outside)
    with pytest.raises(PathError, match="symbolic link"):
        tools.apply(change)
    assert list(outside.iterdir()) == []


def test_a_symlink_swapped_in_after_planning_does_not_redirect_an_edit(git_repo, tmp_path):
    outside = tmp_path / "outside"
    (outside / "calc").mkdir(parents=True)
    victim = outside / "calc/ops.py"
    victim.write_text("precious\n")
    tools = FileTools(Confinement(git_repo))
    change = tools.plan(Edit("calc/ops.py", 1, 1, "def add(a, b):  # edited"))
    (git_repo / "calc").rename(git_repo / "calc.aside")
    (git_repo / "calc").symlink_to(outside / "calc", target_is_directory=True)
    with pytest.raises(PathError):
        tools.apply(change)
    assert victim.read_text() == "precious\n"


def test_a_file_swapped_for_a_symlink_is_neither_read_nor_written(git_repo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the repo\n")
    tools = FileTools(Confinement(git_repo))
    change = tools.plan(StrReplaceEditor(command="str_replace", path="README.md",
                                         old_str="# calc", new_str="# CALC"))
    (git_repo / "README.md").unlink()
    (git_repo / "README.md").symlink_to(secret)
    with pytest.raises(PathError):
        tools.apply(change)
    assert secret.read_text() == "outside the repo\n"


def exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE): both always exist."""
    if _libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE):
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), str(a))


def _met_the_swaps(observations: list) -> bool:
    """Some creates got through, or were stopped at the open itself."""
    return any(o.error is None for o in observations) or any(
        "became a symbolic link" in o.error for o in observations if o.error is not None
    )


def test_creates_racing_a_symlink_swapper_never_land_outside(git_repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    work, link = git_repo / "work", git_repo / "work.link"
    work.mkdir()
    link.symlink_to(outside, target_is_directory=True)
    try:
        exchange(work, link)
        exchange(work, link)
    except OSError as error:
        pytest.skip(f"this filesystem cannot swap names atomically: {error}")
    stop = threading.Event()
    swaps = 0
    swap_errors: list[OSError] = []

    def swapper() -> None:  # `work` flips between the real directory and a link to outside
        nonlocal swaps
        try:
            while not stop.is_set() and swaps < 200_000:
                exchange(work, link)
                swaps += 1
        except OSError as error:
            swap_errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # let the threads interleave as finely as they can
    observations = []
    thread = threading.Thread(target=swapper, daemon=True)
    try:
        with Executor(git_repo, command_timeout=30) as executor:
            thread.start()
            # At least 300 creates, and on until the swaps have met some (a loaded machine can
            # leave the swapper parked on one side for a long stretch).
            for n in range(3000):
                action = StrReplaceEditor(command="create", path=f"work/f{n}.txt", file_text=f"{n}\n")
                observations.append(executor.execute(action))
                if n >= 300 and _met_the_swaps(observations):
                    break
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert not swap_errors and swaps > 100
    assert sorted(p.name for p in outside.iterdir()) == []
    created = [o for o in observations if o.error is None]
    refused = [o for o in observations if o.error is not None]
    assert all(any(why in o.error for why in ("symlink", "symbolic link", "exists"))
               for o in refused), sorted({o.error[:60] for o in refused})
    assert _met_the_swaps(observations)
    real = work if not work.is_symlink() else link
    assert len(list(real.iterdir())) == len(created)


def test_a_symlink_loop_is_an_observation_for_every_tool(executor: Executor, git_repo: Path):
    os.symlink("loop", git_repo / "loop")
    for action in (
        StrReplaceEditor(command="view", path="loop"),
        StrReplaceEditor(command="create", path="loop/x.txt", file_text="x\n"),
        StrReplaceEditor(command="str_replace", path="loop", old_str="a", new_str="b"),
        Read("loop"),
        Search("def", "loop"),
        Edit("loop", 1, 1, "x"),
    ):
        observation = executor.execute(action)
        assert observation.error and "symbolic link loop" in observation.error, action
        prepared = executor.prepare(action)  # the preview does not crash either
        assert prepared.command_shown
    assert executor.execute(StrReplaceEditor(command="view", path=".")).error is None


def test_symlinks_inside_the_repo_still_work(executor: Executor, git_repo: Path):
    (git_repo / "calc_link").symlink_to("calc", target_is_directory=True)
    (git_repo / "readme_link").symlink_to("README.md")
    assert "def add" in executor.execute(Read("calc_link/ops.py")).output
    observation = executor.execute(StrReplaceEditor(command="str_replace", path="readme_link",
                                                    old_str="# calc", new_str="# CALC"))
    assert observation.error is None, observation.error
    assert (git_repo / "README.md").read_text().startswith("# CALC")
    assert (git_repo / "readme_link").is_symlink()
    created = executor.execute(StrReplaceEditor(command="create", path="calc_link/new/deep.py",
                                                file_text="y = 2\n"))
    assert created.error is None, created.error
    assert (git_repo / "calc/new/deep.py").read_text() == "y = 2\n"


def test_a_fifo_is_refused_not_waited_on(executor: Executor, git_repo: Path):
    os.mkfifo(git_repo / "pipe")
    for action in (StrReplaceEditor(command="view", path="pipe"), Read("pipe")):
        observation = executor.execute(action)
        assert observation.error and "not a regular file" in observation.error
