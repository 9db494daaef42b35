"""How many git processes a checkpoint (+ its step diff) starts, counted through a `git` on PATH
that logs its command line and runs the real git: a step that changed nothing costs none, and
so does one that edited tracked files in place (its tree is made in Python, its diff comes from
the session's long-lived `diff-tree --stdin`); what they hold stays exact."""

from __future__ import annotations

import os
import zlib
import shutil
from pathlib import Path

import pytest

from agent_core.git.checkpoints.tree_watch import local_file_system
from agent_core.workspace import Workspace
from tests.fixtures.repos import git, make_repo
from tests.test_workspace_support import bash, files

pytestmark = pytest.mark.skipif(not local_file_system(Path.cwd()),
                                reason="the tree watch is off on this file system")

TREE = {f"pkg{i % 3}/mod{i % 2}/file{i}.py": f"def f{i}():\n    return {i}\n" for i in range(30)}


class GitLog:
    """A `git` first on PATH that appends its subcommand to a log, then execs the real git."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real = shutil.which("git")
        assert real is not None
        shim_dir = tmp / "shim"
        shim_dir.mkdir()
        self.log = tmp / "git.log"
        self.log.write_text("")
        shim = shim_dir / "git"
        shim.write_text(
            "#!/bin/sh\n"
            # one write per process: git processes run side by side
            "line=$(printf '%s ' \"$@\" | tr '\\n' ' ')\n"
            f"printf '%s\\n' \"$line\" >> '{self.log}'\n"
            f"exec '{real}' \"$@\"\n"
        )
        shim.chmod(0o755)
        monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{os.environ['PATH']}")

    def take(self) -> list[str]:
        """The subcommands run since the last call (each after its `-c` settings)."""
        lines = self.log.read_text().splitlines()
        self.log.write_text("")
        commands = []
        for line in lines:
            words = line.split()
            while words and words[0] == "-c":
                words = words[2:]
            commands.append(" ".join(words[:2]))
        return commands


def git_tree(root: Path) -> str:
    """The work tree's tree as git itself makes it."""
    return bash(root, "git add -A && git write-tree && git reset -q").strip()


def warm(root: Path) -> Workspace:
    """A session whose tree watch has seen `git status` run once since it was laid."""
    ws = Workspace.open(root)
    ws.begin("s")
    for step in (1, 2):
        ws.checkpoint(step)
    assert ws.watching
    return ws


def test_a_step_that_edited_files_in_place_runs_no_git_process(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", TREE)
    git(root, "gc", "-q")  # the history packed: trees are read once through `cat-file`
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    before = files(root)
    edits = ["echo '# step 3' >> pkg1/mod1/file7.py",
             "sed -i 's/return 1$/return 11/' pkg1/mod1/file1.py",  # a temporary file renamed over it
             "echo '# step 5' >> pkg1/mod1/file7.py && chmod +x pkg1/mod1/file13.py",
             "rm pkg1/mod1/file19.py && printf 'x' > pkg1/mod1/file25.py"]
    for step, command in enumerate(edits, start=3):
        log.take()
        bash(root, command)
        ws.checkpoint(step)
        diff = ws.step_diff(step)
        ran = log.take()
        if step == 3:  # the session's cat-file and diff-tree start; the packed trees are read
            assert sorted(set(ran)) == ["cat-file --batch-check=%(objectname)", "cat-file tree",
                                        "diff-tree --stdin"], ran
        else:
            assert ran == [], ran
        assert diff.count("diff --git ") == (2 if step >= 5 else 1), diff
        assert ws._snapshots[ws.checkpoints[-1].commit].tree == git_tree(root), command
    log.take()
    ws.checkpoint(7)
    assert ws.step_diff(7) == ""
    assert log.take() == []  # a step that changed nothing runs no git
    bash(root, "echo '# 8' >> pkg0/mod0/file0.py")  # two trees not read yet, read once each
    ws.checkpoint(8)
    assert log.take() == ["cat-file tree"] * 2
    assert ws._snapshots[ws.checkpoints[-1].commit].tree == git_tree(root)
    bash(root, "echo new > pkg0/new.py")  # a new entry: git decides (its ignore rules)
    ws.checkpoint(9)
    assert "add -A" in log.take()
    assert ws._snapshots[ws.checkpoints[-1].commit].tree == git_tree(root)
    ws.restore(5)
    assert "# step 5" in (root / "pkg1/mod1/file7.py").read_text()
    assert (root / "pkg1/mod1/file19.py").exists() and not (root / "pkg0/new.py").exists()
    assert "# 8" not in (root / "pkg0/mod0/file0.py").read_text()
    ws.close()
    again = Workspace.open(root)
    again.attach("s")
    again.restore(4)
    text = (root / "pkg1/mod1/file7.py").read_text()
    assert "# step 3" in text and "# step 5" not in text
    assert "return 11" in (root / "pkg1/mod1/file1.py").read_text()
    again.restore(2)
    assert files(root) == before
    git(root, "fsck", "--strict", "--no-dangling")


def test_edits_new_files_and_deletions_stay_exact_on_the_short_path(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", {**TREE, ".gitignore": "*.log\n"})
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    steps = [
        "echo x >> pkg0/mod0/file0.py",
        "sed -i 's/return 3/return 33/' pkg0/mod1/file3.py",  # a temporary file renamed over it
        "rm pkg2/mod0/file2.py && echo new > pkg2/mod0/new.py",
        "echo tmp > pkg1/t.tmp && rm pkg1/t.tmp && echo kept > pkg1/kept.txt",
        "echo ignored > pkg0/run.log && mkdir -p pkg2/deep/er && echo d > pkg2/deep/er/f.py",
        "mv pkg0/mod0 pkg0/moved && chmod +x pkg1/mod1/file1.py",
        "mkdir -p 'pkg1/we ird' && echo x > \"pkg1/we ird/$(printf 'n\\nl\\377')\"",
        "echo y >> \"pkg1/we ird/$(printf 'n\\nl\\377')\" && ln -s ../pkg1 pkg2/link",
        "rm -rf 'pkg1/we ird' && echo root-level > top.txt",
    ]
    held, looked = {}, []
    for step, command in enumerate(steps, start=3):
        bash(root, command)
        log.take()
        ws.checkpoint(step)
        looked.append(any(c.startswith("status") for c in log.take()))
        held[step] = files(root)
        plain = bash(root, "git add -A && git write-tree && git reset -q").strip()
        assert ws._snapshots[ws.checkpoints[-1].commit].tree == plain, command
    assert looked.count(False) >= 4  # most went by the watch's directories, no `git status`
    for step in reversed(range(3, 3 + len(steps))):
        ws.restore(step)
        assert files(root) == held[step]


def test_the_blob_sizes_come_from_one_cat_file_per_session(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", TREE)
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    ran = []
    for step in range(3, 8):
        bash(root, f"echo '# {step}' >> pkg0/mod0/file{step}.py")
        ws.checkpoint(step)
        ws.step_diff(step)
        ran += log.take()
    assert sum(command.startswith("cat-file") for command in ran) <= 1, ran


def test_a_session_start_writes_its_own_commits_and_reads_the_filters_once(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", {**TREE, ".gitignore": "*.log\n"})
    bash(root, "echo kept > run.log && echo staged >> pkg0/mod0/file0.py && "
               "git add pkg0/mod0/file0.py && echo unstaged >> pkg0/mod0/file0.py")
    before = files(root)
    log = GitLog(tmp_path, monkeypatch)
    ws = Workspace.open(root)
    ws.begin("s")
    ran = log.take()
    # the staged state, git's control files and the ignored files: three commits, no process
    assert not [c for c in ran if c.startswith(("commit-tree", "hash-object -t"))], ran
    assert ran.count("config --show-origin") == 1, ran  # the store's runner blanks no filter
    bash(root, "rm run.log && git reset -q --hard && echo model > pkg1/m.py")
    ws.checkpoint(1)
    ws.restore(0)
    assert files(root) == before
    assert git(root, "diff", "--cached", "--name-only").split() == ["pkg0/mod0/file0.py"]
    git(root, "fsck", "--strict", "--no-dangling")


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_the_empty_tree_is_hashed_in_the_repositorys_object_format(tmp_path, object_format):
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", f"--object-format={object_format}", str(root))
    ws = Workspace.open(root)
    ws.begin("s")  # an unborn HEAD: the user's staged state is the empty tree's
    assert ws._git.empty_tree == git(root, "hash-object", "-t", "tree", "/dev/null").strip()


def test_a_commit_written_without_commit_tree_is_what_commit_tree_writes(tmp_path):
    from agent_core.git.objects.commits import write_commit
    from agent_core.git.process.runner import GitRunner

    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    runner = GitRunner(root)
    tree = git(root, "write-tree").strip()
    head = git(root, "rev-parse", "HEAD").strip()
    message = "navtui checkpoint\n\nhead: x\nbranch: main"
    objects = root / ".git" / "objects"
    ours = write_commit(runner, objects, tree, [head], message, when=(1700000000, 3600))
    assert ours is not None
    env = {**runner.base_env, "GIT_AUTHOR_DATE": "1700000000 +0100",
           "GIT_COMMITTER_DATE": "1700000000 +0100"}
    import subprocess
    theirs = subprocess.run(
        ["git", "commit-tree", "-p", head, "-m", message, tree], cwd=root, env=env,
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert ours == theirs
    assert git(root, "cat-file", "-t", ours).strip() == "commit"
    git(root, "fsck", "--strict", "--no-dangling")


def test_checkpoints_kept_without_pack_objects_survive_a_wipe(tmp_path, monkeypatch):
    from tests.test_workspace_survival import WIPE

    root = make_repo(tmp_path / "repo", TREE)
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    held = {}
    for step in (3, 4, 5):
        bash(root, f"echo '# {step}' >> pkg2/mod1/file5.py && echo n{step} > pkg2/mod1/n{step}.txt")
        ws.checkpoint(step)
        held[step] = files(root)
    assert not any(command.startswith("pack-objects") for command in log.take())
    bash(root, WIPE)  # refs deleted, reflogs expired, every unreachable object pruned
    again = Workspace.open(root)
    again.attach("s")
    for step in (5, 4, 3):
        again.restore(step)
        assert files(root) == held[step]


def test_a_date_set_in_the_environment_is_written_by_git_itself(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", TREE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1600000000 +0200")
    ws = Workspace.open(root)
    ws.begin("s")
    bash(root, "echo z >> pkg0/mod0/file0.py")
    made = ws.checkpoint(1)
    assert git(root, "log", "-1", "--format=%ct %ci", made.commit).startswith("1600000000 2020")


def test_the_store_pack_of_an_edit_step_is_one_git_reads_and_verifies(tmp_path):
    from agent_core.git.objects.packs import read_loose, write_pack

    root = make_repo(tmp_path / "repo", TREE)
    (root / "big.bin").write_bytes(os.urandom(70_000))  # a size that takes several header bytes
    git(root, "add", "-A")
    tree = git(root, "write-tree").strip()
    ids = [tree, *(git(root, "rev-parse", name).strip()
                   for name in (f"{tree}:pkg0", f"{tree}:big.bin", "HEAD"))]
    objects = root / ".git" / "objects"
    found = {i: read_loose(objects, i) for i in ids}
    assert all(found.values())
    packs = tmp_path / "store" / "objects" / "pack"
    packs.mkdir(parents=True)
    write_pack(packs, found)  # type: ignore[arg-type]
    (pack,) = packs.glob("*.pack")
    listed = git(root, "verify-pack", "-v", str(pack.with_suffix(".idx")))
    assert {line.split()[0] for line in listed.splitlines() if line[:1].isalnum() and " " in line
            and len(line.split()[0]) == 40} == set(ids)
    damaged = objects / ids[2][:2] / ids[2][2:]
    damaged.chmod(0o644)
    damaged.write_bytes(zlib.compress(b"blob 3\0abc"))  # content that is not what its name says
    assert read_loose(objects, ids[2]) is None


def test_a_killed_cat_file_is_started_again(tmp_path):
    from agent_core.git.objects.diffs import DiffCaps

    root = make_repo(tmp_path / "repo", TREE)
    ws = warm(root)
    ws.diff_caps = DiffCaps(file_bytes=1000)
    bash(root, "echo one >> pkg0/mod0/file0.py")
    ws.checkpoint(3)
    ws.step_diff(3)
    first = ws._git._sizes._process
    assert first is not None and first.poll() is None
    bash(root, f"kill {first.pid}; head -c 5000 /dev/zero > pkg0/big.bin")
    bash(root, "echo two >> pkg0/mod0/file0.py")
    first.wait()
    ws.checkpoint(4)
    diff = ws.step_diff(4)
    assert "+two" in diff and "pkg0/big.bin: 5000 bytes" in diff
    assert ws._git._sizes._process is not first
    ws.close()
    assert first.poll() is not None


def test_a_killed_diff_tree_is_started_again_and_its_step_diff_is_exact(tmp_path):
    root = make_repo(tmp_path / "repo", TREE)
    ws = warm(root)
    bash(root, "echo one >> pkg0/mod0/file0.py")
    ws.checkpoint(3)
    ws.step_diff(3)
    first = ws._git._pairs._process
    assert first is not None and first.poll() is None
    bash(root, f"kill {first.pid}")
    first.wait()
    bash(root, "echo two >> pkg0/mod0/file0.py && mv pkg1/mod1/file7.py pkg1/moved.py")
    ws.checkpoint(4)
    diff = ws.step_diff(4)
    assert "+two" in diff and "rename to pkg1/moved.py" in diff
    assert ws._git._pairs._process is not first
    ws.close()
    assert first.poll() is not None


@pytest.mark.parametrize("edit", [
    "echo two >> pkg0/mod0/file0.py && mv pkg1/mod1/file7.py pkg1/moved.py",
    "printf 'bin\\000ary\\377' > pkg0/b.bin && chmod +x pkg2/mod0/file2.py",
    "printf 'x\\n' > \"pkg1/$(printf 'n\\nl\\377')\" && ln -s pkg0 link && rm -r pkg2",
    # text that looks like what the long-lived diff-tree writes between diffs
    "printf '%s %s\\n' $(git rev-parse HEAD^{tree}) $(git rev-parse HEAD^{tree}) >> pkg0/mod0/file0.py",
])
def test_a_step_diff_from_the_long_lived_diff_tree_is_what_git_writes(tmp_path, edit):
    from agent_core.git.objects.diffs import PATCH_ARGS
    from agent_core.git.objects.raw_patch import RAW_PATCH_ARGS

    root = make_repo(tmp_path / "repo", TREE)
    ws = warm(root)
    for step, command in ((3, "echo warm >> pkg0/mod0/file0.py"), (4, edit)):
        bash(root, command)
        previous = ws._snapshots[ws.checkpoints[-1].commit].tree
        ws.checkpoint(step)
        tree = ws._snapshots[ws.checkpoints[-1].commit].tree
        args = ("-c", "core.bigFileThreshold=256000", "diff-tree", *RAW_PATCH_ARGS, *PATCH_ARGS)
        once = ws._git.run(*args, previous, tree)
        assert ws._git.diff_pair(args[:2], args[3:], previous, tree) == once
        assert ws._git._pairs._process is not None and ws._git._pairs._process.poll() is None
        assert ws.step_diff(step) == ws._diffs.bounded(previous, tree, ws.diff_caps)[0]


def test_a_sha256_repository_keeps_its_edit_steps_through_a_wipe(tmp_path, monkeypatch):
    from tests.test_workspace_survival import WIPE

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "--object-format=sha256")
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    held = {}
    for step in (3, 4):
        bash(root, f"echo '# {step}' >> pkg1/mod0/file4.py")
        held[step] = files(root)
        assert len(ws.checkpoint(step).commit) == 64
    assert not [c for c in log.take() if c.startswith(("pack-objects", "commit-tree"))]
    assert not list((root / ".git/navtui/store/objects/pack").glob("tmp-*"))
    bash(root, WIPE)
    again = Workspace.open(root)
    again.attach("s")
    again.restore(4)
    assert files(root) == held[4]
    again.restore(3)
    assert files(root) == held[3]


@pytest.mark.parametrize("edit", [
    "sed -i 's/return 7/return 70/' pkg1/mod1/file7.py",  # a temporary file renamed over it
    "echo 'def g(): pass' > pkg1/mod1/added.py",  # a new file
    "rm pkg1/mod1/file1.py",
    "chmod +x pkg1/mod1/file7.py",  # the same content, another mode: a new tree
])
def test_edits_that_make_or_remove_entries_run_at_most_three_git_processes(tmp_path, monkeypatch,
                                                                          edit):
    """add, write-tree and, where entries were made, the ignored files' listing (no diff-tree:
    the step diff comes from the long-lived one)."""
    root = make_repo(tmp_path / "repo", {**TREE, ".gitignore": "*.log\n"})
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    bash(root, "echo warm >> pkg0/mod0/file0.py")  # starts the session's cat-file
    ws.checkpoint(3)
    ws.step_diff(3)
    log.take()
    bash(root, edit)
    ws.checkpoint(4)
    diff = ws.step_diff(4)
    ran = log.take()
    assert len(ran) <= 3 and not [c for c in ran if c.startswith("diff-tree")], ran
    assert diff.count("diff --git ") == 1


@pytest.mark.parametrize("rewrite", [
    "sed -i 's/return 12345/return 0/' pkg1/mod1/file7.py",  # no match: the file is written anew
    "f=$(mktemp) && cp pkg1/mod1/file7.py $f && cat $f > pkg1/mod1/file7.py && rm $f",
    "touch pkg1/mod1/file7.py pkg0/mod0/file0.py",
    "echo tmp > pkg0/mod1/t.py && rm pkg0/mod1/t.py",
])
def test_a_step_that_rewrote_files_as_they_were_runs_no_git(tmp_path, monkeypatch, rewrite):
    """The files hash as they were: the tree is the last one, made with no git process, and
    no step diff (a file made anew may still be listed as ignored or not); a later edit is
    still seen."""
    root = make_repo(tmp_path / "repo", TREE)
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    last = ws.checkpoints[-1]
    log.take()
    bash(root, rewrite)
    ws.checkpoint(3)
    assert ws.step_diff(3) == ""
    ran = log.take()
    assert [command for command in ran if command != "ls-files -z"] == [], ran
    assert ws._snapshots[ws.checkpoints[-1].commit].tree == ws._snapshots[last.commit].tree
    bash(root, "echo '# later' >> pkg1/mod1/file7.py")
    ws.checkpoint(4)
    assert "+# later" in ws.step_diff(4)
    plain = bash(root, "git add -A && git write-tree && git reset -q").strip()
    assert ws._snapshots[ws.checkpoints[-1].commit].tree == plain


def test_an_ignored_file_made_on_the_short_path_is_listed_and_kept(tmp_path, monkeypatch):
    root = make_repo(tmp_path / "repo", {**TREE, ".gitignore": "*.log\n"})
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    bash(root, "echo kept > pkg0/mod1/run.log && echo x >> pkg0/mod1/file1.py")
    ws.checkpoint(3)
    ran = log.take()
    assert any(command.startswith("ls-files") for command in ran), ran  # listed again
    held = files(root)
    bash(root, "rm pkg0/mod1/run.log")
    ws.checkpoint(4)
    ws.restore(3)
    assert files(root) == held


def test_a_group_shared_repository_keeps_its_object_directories_group_writable(tmp_path):
    """Both what navtui writes itself and what git writes through navtui's private view."""
    root = make_repo(tmp_path / "repo", TREE)
    git(root, "config", "core.sharedRepository", "group")
    objects = root / ".git" / "objects"
    objects.chmod(0o2775)  # what `git init --shared=group` makes
    git(root, "repack", "-adq")
    git(root, "prune-packed")  # no loose objects: navtui's commit needs a new fan-out directory
    for fanout in objects.iterdir():
        if len(fanout.name) == 2:
            fanout.rmdir()
    ws = warm(root)
    bash(root, "echo z >> pkg0/mod0/file0.py")
    made = ws.checkpoint(3)
    fanouts = [d for d in objects.iterdir() if len(d.name) == 2]
    assert objects / made.commit[:2] in fanouts  # navtui's own, beside those git made
    assert {d.stat().st_mode & 0o7777 for d in fanouts} == {0o2775}


def test_a_step_too_big_for_one_small_pack_is_packed_by_git_and_survives(tmp_path, monkeypatch):
    from agent_core.git.objects.packs import MAX_LOOSE_BYTES
    from tests.test_workspace_survival import WIPE

    root = make_repo(tmp_path / "repo", TREE)
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    part = MAX_LOOSE_BYTES // 2 + 1  # each object fits the small pack, the three do not
    for name in ("a", "b", "c"):
        (root / "pkg0" / f"{name}.bin").write_bytes(os.urandom(part))
    ws.checkpoint(3)
    held = files(root)
    assert any(command.startswith("pack-objects") for command in log.take())
    bash(root, WIPE)  # the big files go with the clean
    again = Workspace.open(root)
    again.attach("s")
    again.restore(3)
    assert files(root) == held


def test_the_tree_now_needs_no_status_after_a_quiet_checkpoint_and_sees_a_later_edit(
    tmp_path, monkeypatch,
):
    root = make_repo(tmp_path / "repo", TREE)
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    assert "pkg0/mod0/file0.py" not in ws.patch()
    assert not any(command.startswith("status") for command in log.take())
    bash(root, "echo late >> pkg0/mod0/file0.py && echo new > pkg1/new.txt")  # no checkpoint
    assert "+late" in ws.patch() and "pkg1/new.txt" in ws.changed_files(0)


def test_threads_writing_commits_into_one_store_never_mix_their_files(tmp_path):
    """Batch worktrees share the repository's objects: commits written at once must each land whole."""
    from concurrent.futures import ThreadPoolExecutor

    from agent_core.git.objects.commits import write_commit
    from agent_core.git.process.runner import GitRunner

    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    runner = GitRunner(root)
    tree = git(root, "write-tree").strip()
    objects = root / ".git" / "objects"

    def commit(n: int) -> tuple[str, str]:
        message = f"checkpoint {n} " + "x" * (n * 37 % 5000)
        return write_commit(runner, objects, tree, [], message, when=(1700000000, 0)) or "", message

    with ThreadPoolExecutor(max_workers=8) as pool:
        written = list(pool.map(commit, range(400)))
    for commit_id, message in written:
        body = git(root, "cat-file", "commit", commit_id)
        assert body.endswith("\n\n" + message + "\n"), commit_id
    assert not [p for p in objects.rglob("tmp_obj_*")]
    git(root, "fsck", "--strict", "--no-dangling")


def test_threads_asking_blob_sizes_at_once_each_get_their_own_answers(tmp_path):
    """The session thread and the session-diff thread share one runner's `cat-file`."""
    import threading
    import time

    from agent_core.git.process.runner import GitRunner

    root = make_repo(tmp_path / "repo", {f"f{n}.txt": "y" * n for n in range(1, 60)})
    runner = GitRunner(root)
    blobs = {git(root, "rev-parse", f"HEAD:f{n}.txt").strip(): n for n in range(1, 60)}
    ids = list(blobs)
    wrong: list[str] = []

    def ask(offset: int) -> None:
        for round_ in range(150):
            chosen = ids[(offset + round_) % len(ids):][:7] or ids[:7]
            if runner.object_sizes(chosen) != {i: blobs[i] for i in chosen}:
                wrong.append(f"thread {offset}, round {round_}")

    threads = [threading.Thread(target=ask, args=(n,), daemon=True) for n in range(6)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "a thread waits for an answer"
    runner.close()
    assert not wrong, wrong[:3]


@pytest.mark.parametrize("setting", ["core.ignorecase=true", "core.sharedRepository=group"])
def test_where_a_setting_changes_what_git_records_an_edit_goes_through_git(tmp_path, monkeypatch,
                                                                          setting):
    root = make_repo(tmp_path / "repo", TREE)
    git(root, "config", *setting.split("="))
    log = GitLog(tmp_path, monkeypatch)
    ws = warm(root)
    log.take()
    bash(root, "echo '# edited' >> pkg1/mod1/file7.py")
    ws.checkpoint(3)
    assert "add -A" in log.take()
    assert ws._snapshots[ws.checkpoints[-1].commit].tree == git_tree(root)
