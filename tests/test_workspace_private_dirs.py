"""navtui's private git dirs under .git/navtui (the raw view, the nested views) hold only what
navtui wrote: a `commondir`, config or attributes the model plants there never reach navtui's
own git calls, and undo still gives back the user's work exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_support import bash


def plant_commondir(view: Path, evil: Path, clean: str) -> None:
    """What the model writes: `view/commondir` -> `evil`, a git dir whose config defines a
    clean filter and whose attributes apply it to every file."""
    (evil / "info").mkdir(parents=True)
    (evil / "refs").mkdir()
    (evil / "objects").mkdir()
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text(
        f"[core]\n\trepositoryformatversion = 0\n[filter \"x\"]\n\tclean = \"{clean}\"\n"
        "\trequired = true\n"
    )
    (evil / "info" / "attributes").write_text("* filter=x\n")
    (view / "commondir").write_text(f"{evil}\n")


@pytest.mark.parametrize("clean", ["sh -c 'touch {marker}; cat'", "cat >/dev/null"])
def test_a_commondir_planted_in_the_raw_view_runs_nothing_and_undo_restores(
    git_repo: Path, tmp_path: Path, clean: str,
):
    marker = tmp_path / "marker"
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    view = git_repo / ".git" / "navtui" / "raw-git"
    plant_commondir(view, tmp_path / "evil", clean.format(marker=marker))
    bash(git_repo, "echo step >> README.md && echo more >> calc/ops.py")
    ws.checkpoint(1)
    assert not marker.exists()
    assert not (view / "commondir").exists()
    assert any("raw-git/commondir (not written by navtui: removed)" in line
               for line in ws.git_warnings())
    assert "+more" in ws.step_diff(1)
    ws.restore(0)
    assert (git_repo / "calc" / "ops.py").read_text() == "the user's uncommitted edit\n"
    assert not marker.exists()


def test_files_planted_in_a_nested_view_are_removed_before_use(tmp_path: Path):
    marker = tmp_path / "marker"
    outer = make_repo(tmp_path / "outer", {"a.txt": "a\n"})
    inner = make_repo(outer / "inner", {"b.txt": "b\n"})
    (inner / "b.txt").write_text("the user's edit inside\n")
    ws = Workspace.open(outer)
    ws.begin("s")
    views = list((outer / ".git" / "navtui" / "checkpoints").glob("s.nested/*.raw-git"))
    assert views, "the nested repository has a private view"
    plant_commondir(views[0], tmp_path / "evil", f"sh -c 'touch {marker}; cat'")
    (views[0] / "info" / "sparse-checkout").write_text("nothing\n")
    bash(outer, "echo more >> inner/b.txt && echo more >> a.txt")
    ws.checkpoint(1)
    assert not marker.exists()
    assert not (views[0] / "commondir").exists()
    assert not (views[0] / "info" / "sparse-checkout").exists()
    ws.restore(0)
    assert (inner / "b.txt").read_text() == "the user's edit inside\n"
    assert not marker.exists()
    assert git(inner, "status", "--porcelain") == " M b.txt\n"


def test_a_config_rewritten_in_place_in_the_raw_view_is_written_again(git_repo: Path,
                                                                      tmp_path: Path):
    marker = tmp_path / "marker"
    ws = Workspace.open(git_repo)
    ws.begin("s")
    view = git_repo / ".git" / "navtui" / "raw-git"
    with (view / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = \"touch {marker}; false\"\n")
    (view / "info" / "attributes").write_text("* filter=x\n")
    bash(git_repo, "echo more >> calc/ops.py")
    ws.checkpoint(1)
    assert not marker.exists()
    assert "fsmonitor" not in (view / "config").read_text()
    assert "filter=x" not in (view / "info" / "attributes").read_text()


@pytest.mark.parametrize("tamper", [
    "GIT_INDEX_FILE=.git/navtui/checkpoints/s.index git update-index --assume-unchanged calc/ops.py",
    "echo garbage > .git/navtui/checkpoints/s.index",
])
def test_a_private_index_changed_behind_navtuis_back_is_made_again(git_repo: Path, tamper: str):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    before = (git_repo / "calc" / "ops.py").read_text()
    bash(git_repo, f"{tamper} && echo hidden >> calc/ops.py")
    ws.checkpoint(1)
    assert "+hidden" in ws.step_diff(1)
    assert any("navtui's private index" in line for line in ws.git_warnings())
    ws.restore(0)
    assert (git_repo / "calc" / "ops.py").read_text() == before


def test_an_ignored_files_index_changed_behind_navtuis_back_is_made_again(git_repo: Path):
    (git_repo / "cache.pyc").write_bytes(b"the user's ignored file\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "GIT_INDEX_FILE=.git/navtui/checkpoints/s.ignored.index git rm -q --cached cache.pyc"
                   " && echo more > other.pyc")
    ws.checkpoint(1)
    assert any("private index of ignored files" in line for line in ws.git_warnings())
    bash(git_repo, "rm cache.pyc other.pyc")
    ws.checkpoint(2)
    ws.restore(0)
    assert (git_repo / "cache.pyc").read_bytes() == b"the user's ignored file\n"
    assert not (git_repo / "other.pyc").exists()


def test_a_nested_private_index_changed_behind_navtuis_back_is_made_again(tmp_path: Path):
    outer = make_repo(tmp_path / "outer", {"a.txt": "a\n"})
    inner = make_repo(outer / "inner", {"b.txt": "b\n"})
    ws = Workspace.open(outer)
    ws.begin("s")
    [index] = (outer / ".git" / "navtui" / "checkpoints" / "s.nested").glob("*.index")
    bash(outer, f"GIT_DIR=inner/.git GIT_WORK_TREE=inner GIT_INDEX_FILE={index}"
                " git update-index --assume-unchanged b.txt && echo hidden >> inner/b.txt")
    ws.checkpoint(1)
    assert "+hidden" in ws.step_diff(1)
    assert any("private index of inner" in line for line in ws.git_warnings())
    ws.restore(0)
    assert (inner / "b.txt").read_text() == "b\n"
