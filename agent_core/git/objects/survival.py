"""A private object store that keeps checkpoints alive whatever git commands the model runs.

The model can delete `refs/navtui/*`, expire every reflog and `git gc --prune=now`: the objects
of every checkpoint (and with them the user's uncommitted and untracked work at the start) and
of the user's branches and tags would be gone from the repository. So navtui keeps its own copy
under `.git/navtui/store/objects` (read-only inside the sandbox):

- at the start, a copy (never a hard link: an in-place rewrite of the repository's pack would
  change the copy too) of the repository's packs, and one pack of its loose objects, which hold
  checkpoint 0 and every branch and tag tip (`tips`);
- after each checkpoint with a new commit, one pack of only what is new since the previous one
  (`git pack-objects --revs --sparse <new> --not <previous>`: it walks only the paths whose
  trees differ; a step that changed nothing reuses its commit and packs nothing); where the
  step only changed files, and what it made is loose in the repository (the commit, the trees
  its diff names, the blobs it added), a pack of just those written by navtui (`keep_loose`);
- when something is missing from the repository, it is brought back from the store through
  `git index-pack`, which computes each object's hash from its content: an object the store
  holds under a wrong name (rewritten outside the sandbox) never reaches the repository.

The store is only read through that pipe; navtui never makes it an alternate of the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from agent_core.git.process import deadline
from agent_core.git.errors import WorkspaceError
from agent_core.git.objects.packs import MAX_LOOSE_BYTES, read_loose, write_pack
from agent_core.git.process.runner import GitRunner
from agent_core.git.process.safe_files import (
    append_owned, copy_regular, read_regular, read_text_or_none, write_bytes,
)
from agent_core.git.restore.verified import ObjectCheck

_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_TIP_REFS = ("refs/heads/", "refs/tags/")
_NOT = "--not"
# What navtui reads of what it wrote itself, at most (the model could have replaced any of it).
_SMALL = 16 << 20
_LOG_BYTES = 64 << 20
# A pack of the repository's over this is not copied at the start (a sparse file the model
# planted would be copied for hours): its objects are kept by each checkpoint's own pack.
MAX_PACK_BYTES = 16 << 30  # rev-list's "exclude what follows" line in a --revs stdin list


class SurvivalStore:
    """The store at `path` for the repository whose objects are at `objects`; `git` runs in
    the repository, `private_git_dir` is a git dir of navtui's own (for commands on the
    store)."""

    def __init__(self, git: GitRunner, path: Path, objects: Path, private_git_dir: Path) -> None:
        self._git = git
        self.path = path
        self._objects = objects
        self._packs = path / "objects" / "pack"
        # It only reads and packs objects: no filter to blank.
        self._store_git = GitRunner(git.root, blank_filters=False, location={
            "GIT_DIR": str(private_git_dir), "GIT_COMMON_DIR": str(private_git_dir),
            "GIT_OBJECT_DIRECTORY": str(path / "objects"),
        })

    @property
    def check(self) -> ObjectCheck:
        """What makes the repository's objects sound from this store's true copies."""
        return ObjectCheck(self._git, self._objects, self._store_git)

    # -- keeping -----------------------------------------------------------------------

    def keep_start(self) -> None:
        """Copy what the repository holds now: its packs (those the store lacks) and one pack
        of its loose objects."""
        self._packs.mkdir(parents=True, exist_ok=True)
        _drop_foreign(self.path)
        try:
            names = sorted(os.listdir(self._objects / "pack"))
        except OSError:
            names = []
        left: list[str] = []
        for name in names:
            if not (name.startswith("pack-") and name.endswith(".pack")):
                continue
            index = name[:-5] + ".idx"
            if index not in names or (self._packs / index).exists():
                continue
            try:  # the index last: a pack without one is never read
                for part in (name, index):
                    copy_regular(self._objects / "pack" / part, self._packs / part, MAX_PACK_BYTES)
            except OSError as error:  # a link, a FIFO, a device, over the cap: never copied
                (self._packs / name).unlink(missing_ok=True)
                left.append(f"{name} ({error.strerror or error})")
        loose = _missing_from(self._store_git, self._loose_objects())  # kept by an earlier start
        if loose:
            self._git.run("pack-objects", "-q", "--window=0", "--non-empty",
                          str(self._packs / "pack"), stdin="".join(f"{i}\n" for i in loose).encode())
        if left:
            raise WorkspaceError(f"not copied from objects/pack: {', '.join(left)}")

    def keep(self, commit: str, since: str | None) -> None:
        """Pack what `commit` reaches that `since` (a commit already kept) does not."""
        self._packs.mkdir(parents=True, exist_ok=True)
        revs = f"{commit}\n" + (f"{_NOT}\n{since}\n" if since else "")
        result = self._git.run_full(
            "pack-objects", "--revs", "--sparse", "-q", "--window=0", "--non-empty",
            str(self._packs / "pack"), stdin=revs.encode(), ok_codes=(0, 128),
        )
        if result.returncode and since:
            self.keep(commit, None)  # `since` is gone from the repository: keep all of it
        elif result.returncode:
            raise WorkspaceError(
                f"could not keep checkpoint {commit[:10]} in navtui's store: "
                + result.stderr.decode("utf-8", "replace").strip()
            )

    def keep_loose(self, ids: list[str]) -> bool:
        """Keep the objects `ids` in one small pack written here from the repository's loose
        objects (no git process); False, with nothing written, when one of them is not a loose
        object there or together they pass MAX_LOOSE_BYTES (`keep` then packs what is new)."""
        found = {}
        size = 0
        for object_id in dict.fromkeys(ids):
            loose = read_loose(self._objects, object_id)
            if loose is None:
                return False
            size += len(loose[1])
            if size > MAX_LOOSE_BYTES:  # a big step: pack-objects streams it
                return False
            found[object_id] = loose
        self._packs.mkdir(parents=True, exist_ok=True)
        write_pack(self._packs, found)
        return True

    def _loose_objects(self) -> list[str]:
        found = []
        for prefix in range(256):
            directory = self._objects / f"{prefix:02x}"
            try:
                found += [f"{prefix:02x}{name}" for name in os.listdir(directory)
                          if _ID.fullmatch(f"{prefix:02x}{name}")]
            except OSError:
                continue
        return found

    # -- tips of branches and tags -----------------------------------------------------

    def save_tips(self, session_id: str, tips: dict[str, str]) -> None:
        tips_dir = self.path / "tips"
        tips_dir.mkdir(parents=True, exist_ok=True)
        write_bytes(tips_dir / f"{session_id}.json", json.dumps(tips, indent=1).encode())

    def tips(self, session_id: str) -> dict[str, str]:
        """The branch and tag tips saved at the session's start (untrusted: only well-formed
        names and ids are taken)."""
        try:
            data = json.loads(read_regular(self.path / "tips" / f"{session_id}.json", _SMALL))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            ref: oid for ref, oid in data.items()
            if isinstance(ref, str) and isinstance(oid, str) and ref.startswith(_TIP_REFS)
            and ".." not in ref and _ID.fullmatch(oid)
        }

    def current_tips(self) -> dict[str, str]:
        """The repository's branches and tags now: ref -> object id."""
        out = self._git.run("for-each-ref", "--format=%(refname) %(objectname)", *_TIP_REFS)
        tips = {}
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            ref, _, oid = line.rpartition(" ")
            tips[ref] = oid
        return tips

    # -- navtui's refs, written down beside git's ------------------------------------

    def note_refs(self, session_id: str, refs: dict[str, str | None]) -> None:
        """Append what navtui did to its refs (`None`: deleted) to the session's ref log, from
        which `recorded_refs` rebuilds them when the model deleted them."""
        log = self.path / "refs" / f"{session_id}.log"
        text = "".join(f"{ref} {commit or '-'}\n" for ref, commit in refs.items()).encode()
        try:
            append_owned(log, text)
        except FileNotFoundError:
            log.parent.mkdir(parents=True, exist_ok=True)
            append_owned(log, text)
        except OSError:  # a link, a FIFO or a device in its place: not navtui's, made again
            log.unlink()
            append_owned(log, text)

    def recorded_refs(self, session_id: str) -> dict[str, str]:
        """The session's refs as its ref log has them (untrusted: only navtui's own ref names
        and well-formed ids are taken)."""
        text = read_text_or_none(self.path / "refs" / f"{session_id}.log", _LOG_BYTES, "ascii")
        if text is None:
            return {}
        prefix = f"refs/navtui/{session_id}/"
        refs: dict[str, str] = {}
        for line in text.splitlines():
            ref, _, commit = line.partition(" ")
            name = ref[len(prefix):]
            if not ref.startswith(prefix) or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
                continue
            if commit == "-":
                refs.pop(ref, None)
            elif _ID.fullmatch(commit):
                refs[ref] = commit
        return refs

    def recorded_sessions(self) -> list[str]:
        """Ids of the sessions with a ref log, oldest first."""
        logs = (self.path / "refs").glob("*.log")
        try:
            ordered = sorted(logs, key=lambda p: p.lstat().st_mtime_ns)
        except OSError:
            return []
        return [p.name[:-4] for p in ordered]

    def forget(self, session_id: str, last: bool) -> None:
        """Drop what the store knows of a deleted session; its objects are shared with the
        other sessions, and go with the whole store when it was the `last` one."""
        (self.path / "refs" / f"{session_id}.log").unlink(missing_ok=True)
        (self.path / "tips" / f"{session_id}.json").unlink(missing_ok=True)
        if last:
            shutil.rmtree(self.path, ignore_errors=True)

    # -- bringing back -----------------------------------------------------------------

    def heal(self, refs: dict[str, str], last: str, tips: dict[str, str]) -> None:
        """Bring back what checkpoint commit `last` (and every commit of `refs`) reaches where
        the repository lost it, and point each of navtui's `refs` at its commit again."""
        now = self.current_tips()
        same = [oid for ref, oid in tips.items() if now.get(ref) == oid]
        self.bring_back(list(dict.fromkeys([last, *refs.values()])), same)
        self._git.run("update-ref", "--stdin", stdin="".join(
            f"update {ref} {commit}\n" for ref, commit in refs.items()).encode())

    def restore_tips(self, tips: dict[str, str]) -> list[str]:
        """Put back the branches and tags of `tips` (the session's start) that are gone now, at
        their tips then; their names."""
        if not tips:
            return []
        now = self.current_tips()
        gone = {ref: oid for ref, oid in tips.items() if ref not in now}
        if not gone:
            return []
        same = [oid for ref, oid in tips.items() if now.get(ref) == oid]
        self.bring_back(sorted(set(gone.values())), same)
        self._git.run("update-ref", "--stdin", stdin="".join(
            f"create {ref} {oid}\n" for ref, oid in sorted(gone.items())).encode())
        return sorted(gone)

    def missing(self, ids: list[str]) -> list[str]:
        """Those of `ids` the repository does not have."""
        return _missing_from(self._git, ids)

    def bring_back(self, commits: list[str], have: list[str]) -> None:
        """Copy into the repository what `commits` reach (and `have`, commits the repository
        and the store both hold, do not), each object's hash checked on the way in; raises
        when something is still missing."""
        wanted = self.missing(commits)
        if not wanted:
            return
        revs = "".join(f"{c}\n" for c in wanted) + f"{_NOT}\n" + "".join(f"{h}\n" for h in have)
        sender = deadline.popen(
            self._store_git.argv("pack-objects", "--revs", "--stdout", "-q"),
            cwd=self._git.root, env=self._store_git.base_env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        receiver = deadline.popen(
            self._git.argv("index-pack", "--stdin", "--fix-thin"),
            cwd=self._git.root, env=self._git.base_env,
            stdin=sender.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        assert sender.stdin is not None and sender.stdout is not None
        sender.stdout.close()
        with deadline.watched(sender, self._git.root), deadline.watched(receiver, self._git.root):
            sender.stdin.write(revs.encode())
            sender.stdin.close()
            _, received_error = receiver.communicate()
            sent_error = sender.stderr.read() if sender.stderr else b""
            sender.wait()
        still = self.missing(commits)
        if still:
            why = (sent_error or received_error).decode("utf-8", "replace").strip()
            raise WorkspaceError(
                f"{', '.join(c[:10] for c in still)} are gone from the repository and navtui's "
                f"store ({self.path}) cannot give them back{': ' + why if why else ''}. "
                "Something outside git's commands removed or rewrote them."
            )


def _missing_from(git: GitRunner, ids: list[str]) -> list[str]:
    """Those of `ids` the object store `git` runs on does not have."""
    if not ids:
        return []
    out = git.run("cat-file", "--batch-check=%(objectname) %(objecttype)",
                  stdin="".join(f"{i}\n" for i in ids).encode())
    gone = {line.split()[0] for line in out.decode().splitlines() if line.endswith(" missing")}
    return [i for i in ids if i in gone]


def ref_intact(common_dir: Path, ref: str, commit: str) -> bool:
    """Whether loose ref `ref` still holds `commit` as navtui wrote it (no git process); True
    where refs are not files (reftable)."""
    if (common_dir / "reftable").exists():
        return True
    return read_text_or_none(common_dir / ref, 100, "ascii") == commit + "\n"


def _drop_foreign(path: Path) -> None:
    """The store holds packs and nothing that makes git look elsewhere."""
    for name in ("info/alternates", "info/http-alternates"):
        (path / "objects" / name).unlink(missing_ok=True)
