"""Checkpoints are byte-exact whatever the repository's attributes say: line-ending, ident and
encoding conversions and filters apply neither when a checkpoint is taken nor on undo."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from agent_core.git.process.runner import GitRunner
from agent_core.git.checkpoints.user_index import clear_user_marks
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_support import bash, files

ATTRIBUTES = {
    "text=auto": "* text=auto\n",
    "eol=crlf": "*.txt eol=crlf\n",
    "eol=lf": "*.txt text eol=lf\n",
    "ident": "*.txt ident\n",
    "working-tree-encoding": "*.txt working-tree-encoding=UTF-16LE\n",
}
CONTENT = b"$Id$\r\nwindows line\r\nunix line\nlast\r\n"


def commit_attributes(repo: Path, text: str) -> None:
    (repo / ".gitattributes").write_text(text)
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attributes")


@pytest.mark.parametrize("attributes", sorted(ATTRIBUTES))
def test_an_untracked_file_the_model_removes_comes_back_byte_identical(git_repo: Path,
                                                                      attributes: str):
    commit_attributes(git_repo, ATTRIBUTES[attributes])
    (git_repo / "windows.txt").write_bytes(CONTENT)
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm windows.txt")
    ws.checkpoint(1)
    assert ws.changed_files(0) == ["windows.txt"]
    ws.restore(0)
    assert (git_repo / "windows.txt").read_bytes() == CONTENT
    assert files(git_repo) == before


def test_a_tracked_crlf_file_the_model_rewrites_comes_back_byte_identical(git_repo: Path):
    commit_attributes(git_repo, "* text=auto\n*.cfg eol=crlf\n")
    (git_repo / "app.cfg").write_bytes(b"a = 1\nb = 2\n")
    git(git_repo, "add", "app.cfg")
    git(git_repo, "commit", "-qm", "cfg")
    (git_repo / "app.cfg").write_bytes(b"a = 1\r\nb = 2\n")  # the user's own mixed endings
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm app.cfg && printf 'x\\n' > other.cfg")
    ws.checkpoint(1)
    bash(git_repo, "printf 'y\\n' > app.cfg")
    ws.checkpoint(2)
    ws.restore(0)
    assert files(git_repo) == before


def test_a_clean_filter_does_not_strip_what_undo_brings_back(git_repo: Path):
    """nbstripout-style: the configured clean filter drops outputs; the checkpoint keeps them."""
    git(git_repo, "config", "filter.strip.clean", "grep -v output")
    git(git_repo, "config", "filter.strip.smudge", "cat")
    commit_attributes(git_repo, "*.ipynb filter=strip\n")
    notebook = b'{"cell": 1,\n "output": "kept by the user"}\n'
    (git_repo / "nb.ipynb").write_bytes(notebook)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm nb.ipynb")
    ws.checkpoint(1)
    ws.restore(0)
    assert (git_repo / "nb.ipynb").read_bytes() == notebook


def test_an_ignored_crlf_file_comes_back_byte_identical(git_repo: Path):
    commit_attributes(git_repo, "* text=auto\n")
    (git_repo / ".gitignore").write_text(".env\n")
    (git_repo / ".env").write_bytes(b"KEY=1\r\nOTHER=2\r\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm .env")
    ws.checkpoint(1)
    ws.restore(0)
    assert (git_repo / ".env").read_bytes() == b"KEY=1\r\nOTHER=2\r\n"


def test_attributes_the_model_adds_mid_session_change_nothing_either(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "printf 'a\\r\\nb\\r\\n' > data.txt")
    ws.checkpoint(1)
    bash(git_repo, "echo '* text=auto eol=lf' > .gitattributes && rm data.txt")
    ws.checkpoint(2)
    ws.restore(1)
    assert (git_repo / "data.txt").read_bytes() == b"a\r\nb\r\n"
    assert not (git_repo / ".gitattributes").exists()


def test_the_private_view_works_in_a_sha256_repository_and_a_linked_worktree(tmp_path: Path):
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "--object-format=sha256")
    (main / ".gitattributes").write_text("* text=auto\n")
    (main / ".gitignore").write_text("*.log\n")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "initial")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    for session, repo in (("a", main), ("b", tmp_path / "linked")):
        (repo / "dos.txt").write_bytes(b"a\r\nb\r\n")
        (repo / "run.log").write_bytes(b"log\r\n")
        before = files(repo)
        ws = Workspace.open(repo)
        ws.begin(session)
        bash(repo, "rm dos.txt run.log && echo x > new.txt")
        ws.checkpoint(1)
        assert ws.changed_files(0) == ["dos.txt", "new.txt"]
        ws.restore(0)
        ws.close()
        assert files(repo) == before


def test_a_crlf_file_inside_a_nested_repository_comes_back_byte_identical(git_repo: Path):
    inner = make_repo(git_repo / "nested", {".gitattributes": "* text=auto\n", "n.txt": "n\n"})
    (inner / "dos.txt").write_bytes(b"a\r\nb\r\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm nested/dos.txt")
    ws.checkpoint(1)
    ws.restore(0)
    assert (inner / "dos.txt").read_bytes() == b"a\r\nb\r\n"


def test_the_repositorys_file_mode_setting_still_applies_in_the_private_view(git_repo: Path):
    """core.fileMode=false (a FAT or WSL checkout): an exec bit flip is no change, as for git."""
    git(git_repo, "config", "core.fileMode", "false")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "chmod +x calc/ops.py")
    assert ws.checkpoint(1).commit == ws.checkpoints[0].commit
    git(git_repo, "config", "core.fileMode", "true")
    assert ws.checkpoint(2).commit != ws.checkpoints[0].commit


def test_conversions_written_into_navtuis_own_git_dir_are_switched_off_again(git_repo: Path):
    commit_attributes(git_repo, "* text=auto\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    raw = git_repo / ".git" / "navtui" / "raw-git" / "info" / "attributes"
    bash(git_repo, f"echo '* text=auto' > {raw} && printf 'a\\r\\nb\\r\\n' > dos.txt")
    ws.checkpoint(1)
    bash(git_repo, "rm dos.txt")
    ws.checkpoint(2)
    ws.restore(1)
    assert (git_repo / "dos.txt").read_bytes() == b"a\r\nb\r\n"


def committed_long_ago(repo: Path, name: str, content: bytes) -> None:
    """`name` holding `content` on disk, committed, its mtime an hour old: the user's index
    entry holds the blob their git converted, with a stat git trusts (not racily clean)."""
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))
    git(repo, "add", name)
    git(repo, "commit", "-qm", name)
    git(repo, "status", "--short")  # (refreshes the index, as any git command of the user's)


@pytest.mark.parametrize("converts", ["eol=crlf", "lfs-like filter", "autocrlf", "global attributes"])
def test_a_stat_clean_converted_file_the_model_edits_comes_back_byte_identical(
        git_repo: Path, converts: str):
    """The user's index holds the converted blob (LF endings, a pointer) beside the file's stat:
    trusted as it is, checkpoint 0 held that blob and undo wrote it over the user's file."""
    content = b"first line\r\nsecond line\r\n"
    if converts == "eol=crlf":
        commit_attributes(git_repo, "*.txt eol=crlf\n")
    elif converts == "lfs-like filter":
        git(git_repo, "config", "filter.pointer.clean", "sha1sum | sed 's/^/pointer /'")
        git(git_repo, "config", "filter.pointer.smudge", "cat")
        commit_attributes(git_repo, "*.txt filter=pointer -text\n")
    elif converts == "autocrlf":
        git(git_repo, "config", "core.autocrlf", "true")
    else:
        attributes = Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "attributes"
        attributes.parent.mkdir(parents=True, exist_ok=True)
        attributes.write_text("*.txt text eol=crlf\n")
    try:
        committed_long_ago(git_repo, "docs/notes.txt", content)
        blob = git(git_repo, "cat-file", "blob", ":docs/notes.txt").encode()
        assert blob != content, "the user's git converted nothing: the test proves nothing"
        ws = Workspace.open(git_repo)
        ws.begin("s")
        bash(git_repo, "sed -i 's/second/2nd/' docs/notes.txt")
        ws.checkpoint(1)
        ws.restore(0)
        assert (git_repo / "docs/notes.txt").read_bytes() == content
    finally:
        (Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "attributes").unlink(missing_ok=True)


@pytest.mark.parametrize(("attributes", "forgotten"), [
    (None, 0), ("*.png binary\n", 0), ("*.txt eol=crlf\n", 2), ("* text=auto\n", 8)  # (every tracked file),
])
def test_only_files_the_users_git_converts_lose_their_stat(git_repo: Path, tmp_path: Path,
                                                           attributes: str | None, forgotten: int):
    """Every other entry keeps the stat git trusts: a session's start reads no file again."""
    if attributes is not None:
        commit_attributes(git_repo, attributes)
    committed_long_ago(git_repo, "a.txt", b"a\n")
    committed_long_ago(git_repo, "b.txt", b"b\n")
    copy = tmp_path / "index-copy"
    copy.write_bytes((git_repo / ".git" / "index").read_bytes())
    runner = GitRunner(git_repo)
    assert clear_user_marks(runner, copy, git_repo / ".git") == forgotten


@pytest.mark.parametrize("where", ["info/attributes", "core.attributesFile"])
def test_a_fifo_named_as_an_attributes_file_is_never_read_by_the_conversion_check(
        git_repo: Path, where: str):
    """A hostile repository can name a FIFO where git reads attributes: the check never asks
    git to read it (`check-attr` would block), and takes every file as converted instead."""
    commit_attributes(git_repo, "*.png binary\n")  # (attributes to check: check-attr would run)
    committed_long_ago(git_repo, "a.txt", b"a\n")
    tracked = len(git(git_repo, "ls-files").splitlines())
    fifo = git_repo / ".git" / "info" / "attributes"
    if where == "core.attributesFile":
        fifo = git_repo.parent / "attributes-fifo"
        git(git_repo, "config", "core.attributesFile", str(fifo))
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    copy = git_repo.parent / "index-copy"
    copy.write_bytes((git_repo / ".git" / "index").read_bytes())
    assert clear_user_marks(GitRunner(git_repo), copy, git_repo / ".git") == tracked
