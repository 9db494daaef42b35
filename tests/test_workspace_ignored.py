"""Ignored files are inside the safety net (up to a size cap, the rest named); nested repositories
are named as outside it."""

from __future__ import annotations

from pathlib import Path

from agent_core.workspace import IgnoredCaps, Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_support import bash, files

CAPS = IgnoredCaps(file_bytes=10_000, dir_files=50, dir_bytes=50_000)


def project(root: Path) -> Path:
    make_repo(root, {"app.py": "print('hi')\n", ".gitignore": ".env\n.venv/\nhuge/\n*.log\n"})
    (root / ".env").write_text("TOKEN=the user's only copy\n")
    (root / ".venv/lib").mkdir(parents=True)
    (root / ".venv/lib/site.py").write_text("# small venv file\n")
    (root / ".venv/bin").mkdir()
    (root / ".venv/bin/python").write_text("#!/bin/sh\n")
    (root / ".venv/bin/python").chmod(0o755)
    (root / "huge").mkdir()
    for n in range(60):
        (root / "huge" / f"f{n}.bin").write_bytes(b"x" * 100)
    (root / "big.log").write_bytes(b"y" * 20_000)
    (root / "small.log").write_text("kept\n")
    return root


def started(root: Path) -> Workspace:
    """A session on `root` with the small caps above."""
    ws = Workspace.open(root)
    ws.ignored_caps = CAPS
    ws.begin("s")
    return ws


def test_reset_hard_and_clean_fdx_are_undone_for_ignored_files_under_the_cap(tmp_path: Path):
    root = project(tmp_path / "repo")
    before = files(root)
    ws = started(root)
    outside = ws.outside_checkpoints()
    assert any("huge/" in line and "60 files" in line for line in outside)
    assert any("big.log" in line for line in outside)
    assert not any(".env" in line or ".venv" in line for line in outside)

    bash(root, "echo changed >> app.py && git reset -q --hard && git clean -qfdx")
    assert not (root / ".env").exists() and not (root / ".venv").exists()
    ws.checkpoint(1)
    ws.restore(0)

    after = files(root)
    assert after[".env"] == before[".env"]
    assert after[".venv/lib/site.py"] == before[".venv/lib/site.py"]
    assert after[".venv/bin/python"] == ("exec", b"#!/bin/sh\n")
    assert after["small.log"] == before["small.log"]
    assert not (root / "huge").exists()  # over the cap: named at the start, not kept


def test_ignored_files_stay_out_of_diffs_and_patches(tmp_path: Path):
    root = project(tmp_path / "repo")
    ws = started(root)
    bash(root, "echo SECRET=2 >> .env && echo x > new.log && echo m >> app.py")
    ws.checkpoint(1)
    assert "TOKEN" not in ws.patch() and ".env" not in ws.step_diff(1)
    assert ws.changed_files(0) == ["app.py"]
    ws.restore(0)
    assert (root / ".env").read_text() == "TOKEN=the user's only copy\n"
    assert not (root / "new.log").exists()


def test_an_ignored_file_that_becomes_a_directory_and_back_is_kept_and_undone(tmp_path: Path):
    """git refuses an index entry beside one it replaces (`small.log` and `small.log/x`): the
    old entry leaves first, so neither step fails, and undo brings back each shape."""
    root = project(tmp_path / "repo")
    ws = started(root)
    bash(root, "rm small.log && mkdir small.log && echo inside > small.log/x.txt")
    ws.checkpoint(1)
    bash(root, "rm -r small.log && echo a file again > small.log")
    ws.checkpoint(2)
    ws.restore(1)
    assert (root / "small.log/x.txt").read_text() == "inside\n"
    ws.restore(0)
    assert (root / "small.log").read_text() == "kept\n"


def test_undo_does_not_delete_ignored_files_created_outside_the_session(tmp_path: Path):
    root = project(tmp_path / "repo")
    ws = started(root)
    bash(root, "echo m >> app.py")
    ws.checkpoint(1)
    (root / "later.log").write_text("the user's log, made after the step\n")
    ws.restore(0)
    assert (root / "later.log").exists()


def test_nested_repositories_and_submodules_are_named_as_outside(git_repo: Path,
                                                                 tmp_path: Path):
    library = make_repo(tmp_path / "library", {"lib.py": "VERSION = 1\n"})
    git(git_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library),
        "vendor/lib")
    git(git_repo, "commit", "-qm", "submodule")
    make_repo(git_repo / "nested", {"n.txt": "n\n"})
    ws = Workspace.open(git_repo)
    ws.begin("s")
    outside = ws.outside_checkpoints()
    assert any("vendor/lib" in line and "submodule" in line for line in outside)
    assert any("nested" in line for line in outside)
    bash(git_repo, "make_it() { mkdir -p other && cd other && git init -q && echo o > o.txt"
                   " && git add o.txt && git -c user.name=m -c user.email=m@x commit -qm o; };"
                   " make_it")
    ws.checkpoint(1)
    # One the model made is kept whole (tests/test_workspace_made_git.py), and named as such.
    assert not any("other" in line for line in ws.outside_checkpoints())
    assert any(line.startswith("other/.git (made by the model") for line in ws.made_git.news())
    assert ws.outside_checkpoints() == []  # each named once


def test_the_session_tells_the_user_what_is_outside_its_checkpoints(tmp_path: Path):
    from agent_core.events import Notice
    from agent_core.policy import AutoPolicy
    from tests.test_session import make_session, write_script

    root = project(tmp_path / "repo")
    outputs = ["Thought: Clean.\nAction: bash git clean -qfdx", "Thought: Done.\nAction: submit"]
    session, _, events = make_session(root, write_script(tmp_path / "s.jsonl", outputs), "text")
    session.workspace.ignored_caps = CAPS
    try:
        assert session.run(AutoPolicy()).reason == "submitted"
        session.undo(0)
    finally:
        session.close()
    [notice] = [e.message for e in events if isinstance(e, Notice) and "undo cannot" in e.message]
    assert "huge/ (60 files" in notice and "big.log" in notice
    assert (root / ".env").exists() and (root / ".venv/lib/site.py").exists()


def test_ignored_files_come_and_go_on_undo_in_a_sha256_repository(tmp_path: Path):
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(root))
    (root / ".gitignore").write_text(".env\n*.log\n")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "start")
    ws = Workspace.open(root)
    ws.begin("s256")  # no ignored file yet: checkpoint 0 keeps none
    bash(root, "echo 'K=1' > .env")
    ws.checkpoint(1)
    ws.restore(0)
    assert not (root / ".env").exists()
    bash(root, "echo 'K=2' > .env && echo 'the log' > run.log")
    ws.checkpoint(1)
    bash(root, "rm .env run.log")
    ws.checkpoint(2)
    ws.restore(1)
    assert (root / ".env").read_text() == "K=2\n" and (root / "run.log").read_text() == "the log\n"
