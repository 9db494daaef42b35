"""A hostile repository: its config, hooks and filters never run from navtui's own git calls."""

from __future__ import annotations

from pathlib import Path

from agent_core.workspace import Workspace
from agent_core.git.objects.patches import write_patch
from agent_core.git import commit_patch_to_branch
from app.finish import save_patch
from tests.fixtures.repos import git
from tests.test_workspace_support import bash, files

HOOKS = ("reference-transaction", "post-index-change", "pre-commit", "post-checkout")


def arm(repo: Path, marks: Path) -> None:
    """Every way a repository can make git run its code, each leaving a mark when it runs."""
    marks.mkdir(exist_ok=True)
    git(repo, "config", "core.fsmonitor", f"touch {marks}/fsmonitor; false")
    git(repo, "config", "filter.x.clean", f"touch {marks}/clean; cat")
    git(repo, "config", "filter.x.smudge", f"touch {marks}/smudge; cat")
    git(repo, "config", "filter.x.required", "true")
    git(repo, "config", "diff.x.textconv", f"touch {marks}/textconv; cat")
    git(repo, "config", "diff.external", f"touch {marks}/external")
    git(repo, "config", "core.pager", f"touch {marks}/pager; cat")
    for hook in HOOKS:
        path = repo / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\ntouch {marks}/{hook}\n")
        path.chmod(0o755)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x diff=x\n")


def test_checkpoint_diff_undo_and_finish_run_no_repository_code(git_repo: Path, tmp_path: Path):
    marks = tmp_path / "marks"
    (git_repo / "notes.txt").write_text("notes\n")
    git(git_repo, "add", "notes.txt")
    git(git_repo, "commit", "-qm", "notes")
    arm(git_repo, marks)
    before = files(git_repo)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "echo changed >> calc/ops.py && rm notes.txt && echo new > new.txt")
    ws.checkpoint(1)
    assert "+changed" in ws.step_diff(1) and ws.changed_files(0)
    patch = ws.patch()
    assert "new.txt" in patch and ws.dirty_since(1) is False
    ws.restore(0)
    assert files(git_repo) == before
    commit_patch_to_branch(git_repo, patch, "navtui/fix", "fix")

    assert sorted(p.name for p in marks.iterdir()) == []


def test_hooks_and_config_the_model_writes_are_reported_and_never_run(git_repo: Path,
                                                                     tmp_path: Path):
    marks = tmp_path / "marks"
    ws = Workspace.open(git_repo)
    ws.begin("s")
    ws.checkpoint(1)
    assert ws.repo_control_changes() == []
    arm(git_repo, marks)
    bash(git_repo, "echo x >> README.md")
    ws.checkpoint(2)
    changes = ws.git_warnings()
    assert any("core.fsmonitor runs on your next `git status`" in c for c in changes)
    assert any(".git/hooks/reference-transaction (a hook" in c and "quarantine" in c
               for c in changes)
    assert any(".git/info/attributes (added)" in c for c in changes)
    assert ws.git_warnings() == []  # reported once
    assert not (git_repo / ".git" / "hooks" / "reference-transaction").exists()
    assert "fsmonitor" not in (git_repo / ".git" / "config").read_text()
    ws.restore(0)
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_session_warns_when_a_step_changes_hooks_or_config(git_repo: Path, tmp_path: Path):
    from agent_core.events import Notice
    from agent_core.policy import AutoPolicy
    from tests.test_session import make_session, write_script

    marks = tmp_path / "marks"
    outputs = [
        f"Thought: Persist.\nAction: bash git config core.fsmonitor 'touch {marks}/fsmonitor'"
        f" && printf '#!/bin/sh\\ntouch {marks}/hook\\n' > .git/hooks/reference-transaction"
        " && chmod +x .git/hooks/reference-transaction",
        "Thought: Done.\nAction: submit",
    ]
    marks.mkdir()
    session, _, events = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs),
                                      "text")
    try:
        assert session.run(AutoPolicy()).reason == "submitted"
    finally:
        session.close()
    notices = [e.message for e in events if isinstance(e, Notice)]
    warning = next(n for n in notices if "core.fsmonitor" in n)
    assert ".git/hooks/reference-transaction" in warning
    assert sorted(p.name for p in marks.iterdir()) == []


def test_patches_round_trip_bytes_that_are_not_utf8(git_repo: Path, tmp_path: Path):
    name = b"caf\xe9.txt"
    ws = Workspace.open(git_repo)
    ws.begin("s")
    (git_repo / name.decode("utf-8", "surrogateescape")).write_bytes(b"latin-1: \xe9\xe8\n")
    ws.checkpoint(1)
    patch = ws.patch()

    saved = save_patch(patch, tmp_path / "out.patch")
    assert b"caf\xe9.txt" in saved.read_bytes() and b"\xe9\xe8" in saved.read_bytes()
    other = tmp_path / "other.patch"
    write_patch(patch, other)
    assert other.read_bytes() == saved.read_bytes()

    commit = commit_patch_to_branch(git_repo, patch, "navtui/latin", "latin-1")
    names = git_bytes(git_repo, "ls-tree", "-z", "--name-only", commit).split(b"\0")
    assert name in names
    shown = git_bytes(git_repo, "cat-file", "blob", commit.encode() + b":" + name)
    assert shown == b"latin-1: \xe9\xe8\n"


def git_bytes(repo: Path, *args: str | bytes) -> bytes:
    import subprocess

    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout


def test_undo_never_writes_through_a_hard_link_the_model_made(git_repo: Path, tmp_path: Path):
    outside = tmp_path / "outside.txt"
    outside.write_text("a file outside the repository\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, f"rm README.md && ln {outside} README.md && echo m >> calc/ops.py")
    ws.checkpoint(1)
    before = (git_repo / "calc/ops.py").read_text()
    ws.restore(0)
    assert outside.read_text() == "a file outside the repository\n"
    assert (git_repo / "README.md").stat().st_nlink == 1
    assert (git_repo / "calc/ops.py").read_text() == before.removesuffix("m\n")


def test_undo_never_deletes_through_an_ignore_file_it_wrote_back_as_a_link(git_repo: Path,
                                                                           tmp_path: Path):
    """Undo writes ignore files first. One the model had made a link to a directory outside,
    then a directory: writing the link back leads `.gitignore/kept.txt` outside, where the
    removal of the directory's file must not reach."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("the user's file, outside the repository\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    before = files(git_repo)
    bash(git_repo, f"rm -f .gitignore && ln -s {outside} .gitignore")
    ws.checkpoint(1)
    bash(git_repo, "rm .gitignore && mkdir .gitignore && echo model > .gitignore/kept.txt")
    ws.checkpoint(2)
    ws.restore(1)
    assert (outside / "kept.txt").read_text() == "the user's file, outside the repository\n"
    assert (git_repo / ".gitignore").is_symlink()
    ws.restore(0)
    assert files(git_repo) == before
