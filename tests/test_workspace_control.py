"""Git's own files (config, hooks, attributes, excludes) are in every checkpoint: a step's diff
shows what it did to them, undo puts them back, and nothing of them is lost or run."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

from agent_core.git.control_files.control import split_control_diff
from agent_core.workspace import Workspace
from tests.fixtures.repos import git
from tests.test_workspace_support import bash

PLANT = (
    "printf '#!/bin/sh\\necho planted\\n' > .git/hooks/post-commit"
    " && chmod +x .git/hooks/post-commit && git config core.pager 'less -+F; touch /tmp/x'"
)


def control_commit(repo: Path, ref: str) -> str:
    """The git-files commit a checkpoint (or a saved state) names in its message."""
    message = git(repo, "log", "-1", "--format=%B", ref)
    return next(line.split(": ", 1)[1] for line in message.splitlines() if line.startswith("control: "))


def test_a_planted_hook_and_pager_go_to_quarantine_and_undo_restores_the_rest(git_repo: Path):
    config = (git_repo / ".git" / "config").read_bytes()
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, PLANT + " && git config user.name model && echo more >> README.md")
    ws.checkpoint(1)

    files, control = split_control_diff(ws.step_diff(1))
    assert "README.md" in files and ".git/" not in files
    assert "diff --git a/.git/config b/.git/config" in control
    assert "+\tpager = \"less -+F; touch /tmp/x\"" in control
    assert "diff --git a/.git/hooks/post-commit b/.git/hooks/post-commit" in control
    assert "+echo planted" in control
    # Right after the step: what runs code is in quarantine, byte for byte, named.
    assert not (git_repo / ".git" / "hooks" / "post-commit").exists()
    assert (git_repo / ".git" / "config").read_bytes() == config
    kept = git_repo / ".git" / "navtui" / "quarantine" / "s-1"
    assert (kept / "hooks" / "post-commit").read_text() == "#!/bin/sh\necho planted\n"
    assert "less -+F" in (kept / "config").read_text()
    warnings = ws.git_warnings()
    assert any(".git/hooks/post-commit (a hook: runs on your next `git commit`) moved to "
               "quarantine: .git/navtui/quarantine/s-1/hooks/post-commit" in w for w in warnings)
    assert any("core.pager runs on your next `git log`" in w for w in warnings)

    # A setting that runs nothing stays, and undo puts it back byte for byte.
    git(git_repo, "config", "user.name", "model")
    ws.checkpoint(2)
    assert ws.git_warnings() == [".git/config (changed): settings your next git commands read"]
    report = ws.restore(0)
    assert (git_repo / ".git" / "config").read_bytes() == config
    assert ".git/config" in report.changed_paths


def test_undo_puts_back_hooks_the_model_deleted_changed_or_made_plain(git_repo: Path):
    hooks = git_repo / ".git" / "hooks"
    for name in ("pre-commit", "pre-push", "commit-msg"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name}\n")
        (hooks / name).chmod(0o755)
    (git_repo / ".git" / "info").mkdir(exist_ok=True)
    (git_repo / ".git" / "info" / "exclude").write_text("*.tmp\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "rm .git/hooks/pre-commit && echo 'exit 1' >> .git/hooks/pre-push"
                   " && chmod -x .git/hooks/commit-msg && echo '*.py' >> .git/info/exclude")
    ws.checkpoint(1)
    # The rewritten pre-push would run: it went to quarantine, the original is back.
    assert (hooks / "pre-push").read_text() == "#!/bin/sh\necho pre-push\n"
    kept = git_repo / ".git" / "navtui" / "quarantine" / "s-1" / "hooks" / "pre-push"
    assert kept.read_text().endswith("exit 1\n") and not kept.stat().st_mode & stat.S_IXUSR
    assert ws.repo_control_changes() == [
        ".git/hooks/commit-msg (changed)", ".git/hooks/pre-commit (removed)",
        ".git/info/exclude (changed)",
    ]
    assert "old mode 100755\nnew mode 100644" in split_control_diff(ws.step_diff(1))[1]

    ws.restore(0)
    for name in ("pre-commit", "pre-push", "commit-msg"):
        assert (hooks / name).read_text() == f"#!/bin/sh\necho {name}\n"
        assert (hooks / name).stat().st_mode & stat.S_IXUSR
    assert (git_repo / ".git" / "info" / "exclude").read_text() == "*.tmp\n"
    assert ws.repo_control_changes() == []  # undo is not a change to report


def test_a_step_that_leaves_git_files_alone_only_stats_them(git_repo: Path, monkeypatch):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    calls: list[tuple[str, ...]] = []
    run = ws._git.run_full

    def counting(*args, **kwargs):
        calls.append(args)
        return run(*args, **kwargs)

    monkeypatch.setattr(ws._git, "run_full", counting)
    bash(git_repo, "echo more >> README.md")
    ws.checkpoint(1)
    assert not [c for c in calls if c[0] in ("hash-object", "update-index") or "config" in c]
    assert ws.repo_control_changes() == []
    bash(git_repo, "git config user.name model")
    ws.checkpoint(2)
    assert [c for c in calls if c[0] == "hash-object"]
    assert ws.repo_control_changes() == [".git/config (changed): user.name = model"]
    assert split_control_diff(ws.step_diff(1))[1] == ""


def test_git_files_changed_by_someone_else_count_as_foreign_and_resume_restores(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, PLANT)
    ws.checkpoint(1)
    ws.close()

    resumed = Workspace.open(git_repo)
    resumed.attach("s")
    assert resumed.foreign_changes() == []
    git(git_repo, "config", "core.editor", "vi")
    assert resumed.foreign_changes() == [".git/config"]
    resumed.save_state("before-undo")
    resumed.restore(0)
    assert not (git_repo / ".git" / "hooks" / "post-commit").exists()
    assert "pager" not in (git_repo / ".git" / "config").read_text()
    assert "editor" not in (git_repo / ".git" / "config").read_text()


def test_a_session_quarantines_a_planted_hook_with_real_bash(git_repo: Path, tmp_path: Path):
    from agent_core.events import Notice
    from agent_core.policy import AutoPolicy
    from tests.test_session import make_session, write_script

    config = (git_repo / ".git" / "config").read_bytes()
    outputs = [f"Thought: Persist.\nAction: bash {PLANT}", "Thought: Done.\nAction: submit"]
    session, _, events = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    try:
        session.start()
        session.decide(AutoPolicy().decide(session.propose()))
        notice = next(e.message for e in events if isinstance(e, Notice) and "core.pager" in e.message)
        assert ".git/hooks/post-commit (a hook: runs on your next `git commit`) moved to " \
               "quarantine" in notice
        assert "+echo planted" in session.records[-1].diff
        assert any("post-commit" in line for line in session.records[-1].extra["git_warnings"])
        assert not (git_repo / ".git" / "hooks" / "post-commit").exists()
        session.undo()
    finally:
        session.close()
    assert not (git_repo / ".git" / "hooks" / "post-commit").exists()
    assert (git_repo / ".git" / "config").read_bytes() == config
    result = subprocess.run(["git", "-C", str(git_repo), "config", "core.pager"], capture_output=True)
    assert result.returncode == 1


def test_plain_transcript_prints_the_git_files_diff(git_repo: Path, tmp_path: Path):
    from rich.console import Console

    from agent_core.policy import AutoPolicy
    from app.headless import Transcript
    from tests.test_session import make_session, write_script

    console = Console(record=True, width=120)
    outputs = [f"Thought: Persist.\nAction: bash {PLANT}", "Thought: Done.\nAction: submit"]
    session, _, _ = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    session.subscribe(Transcript(console))
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    shown = console.export_text()
    assert "git's own config and hooks changed by this step:" in shown
    assert "+++ b/.git/hooks/post-commit" in shown and "+echo planted" in shown


def test_undo_never_deletes_through_a_hooks_directory_swapped_for_a_symlink(git_repo: Path,
                                                                             tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("keep me\n")
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, f"mv .git/hooks .git/hooks.old && ln -s {elsewhere} .git/hooks")
    ws.checkpoint(1)
    ws.restore(0)
    assert (elsewhere / "precious").read_text() == "keep me\n"
    assert not (elsewhere / "pre-commit").exists()
    assert any(".git/hooks/" in line and "left as it is" in line for line in ws.outside_checkpoints())


def test_a_huge_hook_is_named_left_out_and_never_deleted_by_undo(git_repo: Path):
    big = git_repo / ".git" / "hooks" / "pre-push"
    big.write_bytes(b"#!/bin/sh\n" + b"#" * 1_200_000 + b"\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    assert any(".git/hooks/pre-push" in line for line in ws.outside_checkpoints())
    bash(git_repo, "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-push && git config a.b c")
    ws.checkpoint(1)
    assert "+exit 0" in split_control_diff(ws.step_diff(1))[1]
    ws.restore(0)
    assert big.read_text() == "#!/bin/sh\nexit 0\n"  # kept: undo cannot know what it was
    assert "[a]" not in (git_repo / ".git" / "config").read_text()
    assert any("pre-push: not in the checkpoint" in line for line in ws.outside_checkpoints())


def test_the_end_of_a_session_names_git_files_it_leaves_changed(git_repo: Path, tmp_path: Path):
    from agent_core.events import Notice
    from agent_core.policy import AutoPolicy
    from tests.test_session import make_session, write_script

    config = (git_repo / ".git" / "config").read_text()
    benign = "git config user.name model && echo '*.txt text' > .git/info/attributes"
    outputs = [f"Thought: Persist.\nAction: bash {PLANT} && {benign}", "Thought: Done.\nAction: submit"]
    session, _, events = make_session(git_repo, write_script(tmp_path / "s.jsonl", outputs), "text")
    try:
        session.run(AutoPolicy())
    finally:
        session.close()
    [left] = [e.message for e in events if isinstance(e, Notice) and "leaves git's own" in e.message]
    # The config held a planted pager, so all of it went back (the copy is in quarantine).
    assert ".git/config" not in left and "not there before: .git/info/attributes" in left
    [kept] = [e.message for e in events if isinstance(e, Notice) and "are in quarantine" in e.message]
    assert ".git/navtui/quarantine/" in kept and "-1/hooks/post-commit" in kept
    original = left.split("`git show ", 1)[1].split(":PATH`")[0]
    assert git(git_repo, "show", f"{original}:config") == config
