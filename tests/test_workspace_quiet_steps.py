"""Steps that change nothing are checkpointed from one `git status` on the private index (its
untracked cache makes the walk `stat` calls only); whatever a later step creates, anywhere,
ignored files included, is still in the next checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.workspace import Workspace
from tests.fixtures.repos import make_repo
from tests.test_workspace_support import bash, files

# Where an ignored file can appear: beside tracked files, in a directory that holds only
# ignored files, in an empty directory, in a new ignored directory, in an existing ignored one,
# and one made ignored by a .gitignore the step writes.
CREATIONS = {
    "tracked dir": "echo s > src/secret.env",
    "ignored-only dir": "echo o > build/b.o",
    "empty dir": "echo e > empty/.env",
    "new ignored dir": "mkdir -p cache/x && echo c > cache/x/data",
    "existing ignored dir": "echo v > .venv/new.py",
    "new .gitignore": "echo 'notes.txt' > docs/.gitignore && echo n > docs/notes.txt",
}


def project(root: Path) -> Path:
    make_repo(root, {"src/app.py": "x = 1\n", "docs/guide.md": "# g\n",
                     ".gitignore": "*.env\n*.o\ncache/\n.venv/\n"})
    (root / "build").mkdir()
    (root / "build/a.o").write_text("a\n")
    (root / "empty").mkdir()
    (root / ".venv").mkdir()
    (root / ".venv/site.py").write_text("site\n")
    return root


@pytest.mark.parametrize("where", sorted(CREATIONS))
def test_an_ignored_file_made_after_quiet_steps_is_checkpointed(tmp_path: Path, where: str):
    root = project(tmp_path / "repo")
    ws = Workspace.open(root)
    ws.begin("s")
    for step in (1, 2, 3):  # nothing changes: the untracked cache is warm afterwards
        bash(root, "ls -R > /dev/null")
        assert ws.checkpoint(step).commit == ws.checkpoints[0].commit
    bash(root, CREATIONS[where])
    wanted = files(root)
    ws.checkpoint(4)
    bash(root, "git clean -qfdx && git reset -q --hard")
    ws.checkpoint(5)
    ws.restore(4)
    assert files(root) == wanted


def test_quiet_steps_keep_their_own_refs_and_undo_to_them(tmp_path: Path):
    root = project(tmp_path / "repo")
    ws = Workspace.open(root)
    ws.begin("s")
    bash(root, "echo y >> src/app.py")
    first = ws.checkpoint(1)
    quiet = [ws.checkpoint(n) for n in (2, 3, 4)]
    assert {c.commit for c in quiet} == {first.commit}
    refs = bash(root, "git for-each-ref --format='%(refname) %(objectname)' refs/navtui/s/")
    assert refs.split("\n")[1:5] == [f"refs/navtui/s/{n} {first.commit}" for n in (1, 2, 3, 4)]
    bash(root, "echo z > new.txt")
    ws.checkpoint(5)
    ws.restore(3)
    assert not (root / "new.txt").exists()
    assert [c.index for c in Workspace.open(root).attach("s")] == [0, 1, 2, 3]


def test_a_file_that_only_changed_content_with_the_same_size_is_seen(tmp_path: Path):
    root = project(tmp_path / "repo")
    ws = Workspace.open(root)
    ws.begin("s")
    ws.checkpoint(1)
    bash(root, "printf 'x = 2\\n' > src/app.py && mkdir sub && echo u > sub/new.txt")
    ws.checkpoint(2)
    assert ws.changed_files(1) == ["src/app.py", "sub/new.txt"]
    assert "+x = 2" in ws.step_diff(2)
