"""The tree watch lets a checkpoint after a step that changed nothing skip `git status`; it must
never change what a checkpoint holds. Each scenario runs on two identical repositories, one
watched and one not, and every checkpoint's tree and step diff must be the same."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import agent_core.git.checkpoints.tree_watch as tree_watch
from agent_core.executor.shell import Shell
from agent_core.git.checkpoints.tree_watch import local_file_system
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_sandbox import needs_bwrap, sandboxed
from tests.test_workspace_support import PROJECT, bash

pytestmark = pytest.mark.skipif(not local_file_system(Path.cwd()),
                                reason="the tree watch is off on this file system")


class Twins:
    """The same repository twice: `watched` checkpoints with the tree watch, `plain` without."""

    def __init__(self, base: Path, tmp: Path) -> None:
        self.roots = {name: tmp / name for name in ("watched", "plain")}
        self.spaces: dict[str, Workspace] = {}
        for name, root in self.roots.items():
            shutil.copytree(base, root, symlinks=True)
            ws = Workspace.open(root)
            ws.watch_tree = name == "watched"
            ws.begin("s")
            self.spaces[name] = ws
        self.steps = 0

    def step(self, command: str, in_sandbox: bool = False) -> None:
        """Run `command` in both (in the bubblewrap sandbox, at /testbed, when `in_sandbox`),
        checkpoint both, and compare what the checkpoints hold."""
        self.steps += 1
        for root in self.roots.values():
            if in_sandbox:
                with Shell(root, timeout=10, launcher=sandboxed(root)) as shell:
                    shell.run(command)
            else:
                bash(root, command)
        self.checkpoint(f"step {self.steps}: {command}")

    def checkpoint(self, label: str) -> None:
        trees, diffs = {}, {}
        for name, ws in self.spaces.items():
            point = ws.checkpoint(self.steps)
            trees[name] = git(self.roots[name], "rev-parse", f"{point.commit}^{{tree}}")
            diffs[name] = ws.step_diff(self.steps)
        assert trees["watched"] == trees["plain"], label
        assert diffs["watched"] == diffs["plain"], label

    def show(self, path: str) -> str:
        point = self.spaces["watched"].checkpoints[-1]
        return git(self.roots["watched"], "show", f"{point.commit}:{path}")

    def close(self) -> None:
        for ws in self.spaces.values():
            ws.close()


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "base", PROJECT)
    (root / "empty").mkdir()
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\x7fELF")
    (root / "logs").mkdir()
    (root / "logs" / "old.txt").write_text("old\n")
    with (root / ".git" / "info" / "exclude").open("a") as handle:
        handle.write("logs/\n")
    return root


def test_every_kind_of_change_is_seen_after_steps_that_changed_nothing(base: Path,
                                                                       tmp_path: Path):
    twins = Twins(base, tmp_path)
    assert twins.spaces["watched"].watching and not twins.spaces["plain"].watching
    quiet = ["true", "true"]
    for command in [
        *quiet,
        "printf 'def main():\\n    return 2\\n' > src/app.py",  # same size, in place
        *quiet,
        "chmod +x src/util/helpers.py",
        *quiet,
        "touch empty/new.txt",  # a directory that was empty at the start
        *quiet,
        "mkdir -p new/deep && echo a > new/deep/a.txt",
        *quiet,
        "echo b > new/deep/b.txt",  # inside a directory an earlier step made
        *quiet,
        "mv new moved",
        *quiet,
        "echo c >> moved/deep/a.txt",
        *quiet,
        "sed -i '/build/d' .gitignore",  # build/ is no longer ignored
        *quiet,
        "echo fresh > build/fresh.txt",
        *quiet,
        "sed -i '/logs/d' .git/info/exclude",  # neither is logs/
        *quiet,
        "echo new > logs/new.txt",
        *quiet,
        "rm src/app.py",
        *quiet,
        "rm -rf docs && ln -s src docs",  # a directory swapped for a symlink
        *quiet,
        "echo through > docs/through-the-link.txt",
        *quiet,
        "rm -rf moved",
        *quiet,
        "mkdir moved && echo again > moved/again.txt",
        *quiet,
    ]:
        twins.step(command)
    assert twins.spaces["watched"].watching
    assert twins.show("build/fresh.txt") == "fresh\n"
    assert twins.show("logs/new.txt") == "new\n"
    assert twins.show("src/through-the-link.txt") == "through\n"
    twins.close()


def test_a_step_that_changed_nothing_runs_no_git_process(base: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    twins = Twins(base, tmp_path)
    for command in ("true", "true"):
        twins.step(command)
    started: list[list[str]] = []
    real_popen = subprocess.Popen

    def counting(args, *rest, **options):
        started.append(list(args))
        return real_popen(args, *rest, **options)

    monkeypatch.setattr(subprocess, "Popen", counting)
    twins.spaces["watched"].checkpoint(twins.steps + 1)
    assert started == []
    twins.spaces["plain"].checkpoint(twins.steps + 1)
    assert any("status" in args for args in started)
    twins.close()


def test_a_change_made_after_the_step_ended_is_seen_at_the_next_checkpoint(base: Path,
                                                                           tmp_path: Path):
    twins = Twins(base, tmp_path)
    twins.step("true")
    twins.step("true")
    for root in twins.roots.values():
        subprocess.Popen(["bash", "-c", "sleep 0.3; echo late >> README.md"], cwd=root)
    twins.step("true")
    time.sleep(0.8)
    twins.step("true")
    assert twins.show("README.md").endswith("late\n")
    twins.close()


def test_more_events_than_the_kernel_queues_still_leave_nothing_out(base: Path, tmp_path: Path):
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 50_000:
        pytest.skip(f"the kernel queues {limit} events: too many files to make in a test")
    twins = Twins(base, tmp_path)
    twins.step("true")
    twins.step(f"mkdir many && cd many && seq 1 {limit + 500} | xargs touch")
    twins.step("true")
    twins.step("true")
    twins.step("echo last > many/1")
    assert twins.show("many/1") == "last\n"
    twins.close()


def test_a_nested_repository_turns_the_watch_off_and_its_commits_are_seen(base: Path,
                                                                         tmp_path: Path):
    twins = Twins(base, tmp_path)
    same_ids = "GIT_AUTHOR_DATE=2001-01-01T00:00:00 GIT_COMMITTER_DATE=2001-01-01T00:00:00"
    commit = f"{same_ids} git -C inner commit"  # the same commit ids in both twins
    twins.step("true")
    twins.step(f"git init -q inner && echo x > inner/x.txt && git -C inner add x.txt"
               f" && {commit} -qm one")
    assert not twins.spaces["watched"].watching
    twins.step("true")
    twins.step(f"echo y >> inner/x.txt && {commit} -qam two")
    twins.close()


def test_a_tree_with_too_many_directories_is_not_watched_and_still_checkpoints(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(tree_watch, "MAX_DIRECTORIES", 3)
    twins = Twins(base, tmp_path)
    assert not twins.spaces["watched"].watching
    twins.step("true")
    twins.step("echo more >> README.md")
    twins.close()


def test_directories_that_outgrow_the_limit_turn_the_watch_off(base: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tree_watch, "MAX_DIRECTORIES", 20)
    twins = Twins(base, tmp_path)
    assert twins.spaces["watched"].watching
    twins.step("mkdir -p $(seq -f 'd%g' 1 30)")
    twins.step("true")
    assert not twins.spaces["watched"].watching
    twins.step("echo x > d7/x.txt")
    twins.close()


@needs_bwrap
def test_edits_made_inside_the_sandbox_are_seen(base: Path, tmp_path: Path):
    twins = Twins(base, tmp_path)
    twins.step("true")
    twins.step("true")
    twins.step("echo sandboxed >> /testbed/README.md && mkdir /testbed/made", in_sandbox=True)
    twins.step("true")
    twins.step("echo inside > /testbed/made/inside.txt", in_sandbox=True)
    assert twins.show("made/inside.txt") == "inside\n"
    twins.close()


MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:35 / /home/me/net rw,relatime shared:20 - nfs4 server:/export rw
41 22 0:36 / /home/me/fuse\\040dir rw shared:21 - fuse.sshfs host: rw
42 22 0:37 / /home/me/code/repo/mnt rw shared:22 - tmpfs tmpfs rw
"""


@pytest.mark.parametrize(("path", "local"), [
    ("/home/me/code/other", True),
    ("/home/me/net/repo", False),
    ("/home/me/fuse dir/repo", False),
    ("/home/me/code/repo", False),  # another file system is mounted inside it
    ("/home/me/code/repo/mnt/inner", True),
])
def test_only_local_file_systems_with_nothing_mounted_inside_are_watched(path: str, local: bool):
    assert local_file_system(Path(path), mountinfo=MOUNTINFO) is local


def test_a_change_made_while_the_watches_are_laid_again_is_seen(base: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch):
    twins = Twins(base, tmp_path)
    twins.step("true")
    laying = tree_watch.TreeWatch._lay

    def racing(self, ignored: set[str]) -> bool:
        late = self.root / "new" / "late.txt"
        if late.parent.is_dir() and not late.exists():
            late.write_text("late\n")  # after git looked, before the new directory is watched
        return laying(self, ignored)

    monkeypatch.setattr(tree_watch.TreeWatch, "_lay", racing)
    twins.steps += 1
    for root in twins.roots.values():
        bash(root, "mkdir new && echo a > new/a.txt")
        twins.spaces[root.name].checkpoint(twins.steps)
    (twins.roots["plain"] / "new" / "late.txt").write_text("late\n")  # the same, unwatched
    twins.step("true")
    assert twins.show("new/late.txt") == "late\n"
    twins.close()


def test_a_directory_made_while_its_parent_is_read_is_watched(base: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch):
    reading = os.scandir

    def racing(path):
        if isinstance(path, bytes) and Path(os.fsdecode(path)).name == "src":  # the walk's
            entries = list(reading(path))
            late = Path(os.fsdecode(path)) / "late"
            if not late.exists():
                late.mkdir()  # after the read: the walk never sees it
            return iter(entries)
        return reading(path)

    monkeypatch.setattr(os, "scandir", racing)
    twins = Twins(base, tmp_path)
    monkeypatch.undo()
    (twins.roots["plain"] / "src" / "late").mkdir()
    for command in ("true", "true", "true", "echo y > src/late/y.txt", "true"):
        twins.step(command)
    assert twins.show("src/late/y.txt") == "y\n"
    twins.close()


def inotify_descriptors() -> int:
    return sum(os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
               for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}"))


def test_a_session_never_closed_gives_its_watch_back_when_collected(tmp_path):
    """Inotify instances are few per user (128 by default): sessions dropped without `close`
    (a crash, a script) must not spend them, or every later session loses its watch."""
    gc.collect()
    before = inotify_descriptors()
    for number in range(3):
        ws = Workspace.open(make_repo(tmp_path / f"repo{number}", PROJECT))
        ws.begin("s")
        ws.checkpoint(1)
        assert ws.watching and inotify_descriptors() > before
        del ws
    gc.collect()
    assert inotify_descriptors() == before
