"""Issue 34, reads and writes: navtui reads nothing the model could have written without
checking it first. Run as the model would with `--sandbox off` (a real bash that can write the
git dir); inside the sandbox the git dir is the model's own overlay, so these are the worst case.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from agent_core.git.process import deadline
from agent_core.workspace import Workspace, WorkspaceError
from tests.fixtures.repos import git
from tests.test_workspace_support import bash


def loose_path(repo: Path, object_id: str) -> Path:
    return repo / ".git" / "objects" / object_id[:2] / object_id[2:]


def forge(repo: Path, object_id: str, content: bytes) -> None:
    """What the model does: rewrite loose object `object_id` in place with other bytes."""
    path = loose_path(repo, object_id)
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(content) + content))


def test_undo_writes_the_stores_verified_copy_not_a_forged_loose_object(git_repo: Path):
    """Reproduction 2: the user's uncommitted edit is a loose object at step 0; the model
    rewrites that object's file under the same name; undo to step 0 gives the user's bytes."""
    users = b"the user's uncommitted edit\n"
    (git_repo / "calc" / "ops.py").write_bytes(users)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    blob = git(git_repo, "hash-object", "calc/ops.py").strip()
    assert loose_path(git_repo, blob).is_file()
    forge(git_repo, blob, b"import os; os.system('touch /tmp/pwned')\n")
    bash(git_repo, "echo the model >> calc/ops.py")
    ws.checkpoint(1)
    ws.restore(0)
    assert (git_repo / "calc" / "ops.py").read_bytes() == users
    # the repository holds the true object again
    assert git(git_repo, "cat-file", "blob", blob).encode() == users
    ws.close()


def test_a_forged_new_file_is_never_written_either(git_repo: Path):
    """A file undo creates (checkout-index, not an in-place rewrite) comes from a checked
    object too."""
    users = b"the user's untracked notes\n"
    (git_repo / "notes.txt").write_bytes(users)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    blob = git(git_repo, "hash-object", "notes.txt").strip()
    forge(git_repo, blob, b"forged\n")
    bash(git_repo, "rm notes.txt")
    ws.checkpoint(1)
    ws.restore(0)
    assert (git_repo / "notes.txt").read_bytes() == users
    ws.close()


def test_a_forged_object_the_store_cannot_give_back_is_refused_and_nothing_is_written(
    git_repo: Path,
):
    users = b"the user's uncommitted edit\n"
    (git_repo / "calc" / "ops.py").write_bytes(users)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    blob = git(git_repo, "hash-object", "calc/ops.py").strip()
    bash(git_repo, "chmod -R u+w .git/navtui/store && rm -rf .git/navtui/store/objects/pack/*")
    forge(git_repo, blob, b"forged\n")
    bash(git_repo, "echo the model > calc/ops.py")
    ws.checkpoint(1)
    with pytest.raises(WorkspaceError, match="does not hash to its id"):
        ws.restore(0)
    assert (git_repo / "calc" / "ops.py").read_bytes() == b"the model\n"
    ws.close()


def test_a_forged_tree_does_not_lead_undo_to_the_models_blob(git_repo: Path):
    users = b"the user's notes\n"
    (git_repo / "notes").mkdir()
    (git_repo / "notes" / "a.txt").write_bytes(users)
    ws = Workspace.open(git_repo)
    first = ws.begin("s")
    tree = git(git_repo, "rev-parse", f"{first.commit}:notes").strip()
    evil = bash(git_repo, "printf forged | git hash-object -w --stdin").strip()
    path = loose_path(git_repo, tree)
    path.chmod(0o644)
    entry = b"100644 a.txt\0" + bytes.fromhex(evil)
    path.write_bytes(zlib.compress(b"tree %d\0" % len(entry) + entry))
    bash(git_repo, "rm -r notes")
    ws.checkpoint(1)
    ws.restore(0)
    assert (git_repo / "notes" / "a.txt").read_bytes() == users
    ws.close()


def cat(repo: Path, object_id: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", object_id], cwd=repo,
                          capture_output=True, check=True).stdout


def test_a_planted_pack_link_is_never_copied_into_the_store(git_repo: Path, tmp_path: Path):
    """Reproduction 3: a pack and index in objects/pack that are links to a host file are not
    copied into navtui's store (where the model could read them); the start says so."""
    secret = tmp_path / "host-secret"
    secret.write_bytes(b"the user's private key\n" * 100)
    pack = git_repo / ".git" / "objects" / "pack"
    pack.mkdir(parents=True, exist_ok=True)
    stem = "pack-" + "1" * 40
    (pack / f"{stem}.pack").symlink_to(secret)
    (pack / f"{stem}.idx").symlink_to(secret)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    store = git_repo / ".git" / "navtui" / "store"
    for path in store.rglob("*"):
        assert not path.is_file() or b"private key" not in path.read_bytes(), path
    assert any(stem in line for line in ws.git_warnings()), "the start names what it left"
    ws.close()


def test_a_pack_link_to_dev_zero_does_not_fill_the_disk(git_repo: Path):
    """Reproduction 3: the same link to /dev/zero (run in a child limited to 50 MB of file
    writes and 60 s, so a regression cannot fill the disk)."""
    pack = git_repo / ".git" / "objects" / "pack"
    pack.mkdir(parents=True, exist_ok=True)
    stem = "pack-" + "2" * 40
    (pack / f"{stem}.pack").symlink_to("/dev/zero")
    (pack / f"{stem}.idx").symlink_to("/dev/zero")
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (50 << 20, 50 << 20))\n"
        "from agent_core.workspace import Workspace\n"
        f"ws = Workspace.open({str(git_repo)!r}); ws.begin('s'); ws.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr.decode()[-2000:]


@pytest.mark.parametrize("where", [
    "objects/pack/pack-{hex}.idx", "navtui/store/tips/s.json", "navtui/store/refs/s.log",
    "HEAD",
])
def test_a_fifo_under_git_never_blocks_navtui(git_repo: Path, monkeypatch, where: str):
    """Reproduction 4: a FIFO planted under .git (navtui's own state, git's files) never
    blocks navtui: its own reads never open one, and git, which does, is stopped at the
    deadline with a message that says so."""
    monkeypatch.setattr(deadline, "TIMEOUT_S", 3.0)
    ws = Workspace.open(git_repo)
    ws.begin("s")
    ws.checkpoint(1)
    ws.close()
    path = git_repo / ".git" / where.format(hex="3" * 40)
    if "{hex}" in where:
        (path.parent / f"pack-{'3' * 40}.pack").write_bytes(b"PACK")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    outcome: list[object] = []

    def resume() -> None:
        try:
            again = Workspace.open(git_repo)
            again.attach("s")
            again.checkpoint(2)
            again.close()
            outcome.append("done")
        except WorkspaceError as error:
            outcome.append(error)

    thread = threading.Thread(target=resume, daemon=True)
    thread.start()
    thread.join(45)
    if thread.is_alive():  # unblock it, so the test run goes on
        with open(os.open(path, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
    assert outcome, f"navtui hung on a FIFO at .git/{where}"
    if outcome[0] != "done":
        assert "did not finish within" in str(outcome[0]), outcome[0]

