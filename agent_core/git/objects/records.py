"""Git's machine-readable listings, each read by one parser.

* `diff-tree -z` (`--raw`, the default without `-p`): `:OLDMODE NEWMODE OLDID NEWID STATUS\\0PATH\\0`
  (and a second path for a rename or copy) — `raw_records`;
* `ls-files -s -z`: `MODE ID STAGE\\tPATH\\0` — `index_records`;
* `ls-tree -z`: `MODE TYPE ID\\tPATH\\0` — `tree_records`.

Paths stay bytes (git writes them unquoted with `-z`: any byte but NUL, tabs and newlines
included); callers decode them as they need. A record that does not have its format's shape
raises `WorkspaceError` naming the listing, never an IndexError deep in a caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.git.errors import WorkspaceError

GITLINK_MODE = "160000"
TREE_MODE = "040000"


@dataclass(frozen=True)
class RawChange:
    """One path a `diff-tree` changed: modes and ids on both sides ("0"*N where absent), its
    status letter (A, D, M, T, R, C, U, X) and, for a rename or copy, where it came from."""

    old_mode: str
    new_mode: str
    old_id: str
    new_id: str
    status: str
    path: bytes
    source: bytes | None = None

    @property
    def added(self) -> bool:
        return not self.old_id.strip("0")

    @property
    def removed(self) -> bool:
        return not self.new_id.strip("0")


@dataclass(frozen=True)
class IndexEntry:
    """One entry of `ls-files -s`: mode, blob id, merge stage and path."""

    mode: str
    object_id: str
    stage: int
    path: bytes


@dataclass(frozen=True)
class TreeEntry:
    """One entry of `ls-tree`: mode (a tree's is 040000), type (blob, tree, commit), id, name."""

    mode: str
    type: str
    object_id: str
    path: bytes


def raw_records(out: bytes) -> list[RawChange]:
    """The records of `diff-tree -z` output (with `-r`, `-t`, `--no-renames` or not)."""
    changes, position = leading_raw_records(out)
    if out[position:].strip(b"\0"):
        raise _malformed("git diff-tree --raw", out[position:position + 60])
    return changes


def leading_raw_records(out: bytes) -> tuple[list[RawChange], int]:
    """The raw records at the start of `out` (`diff-tree --raw -p` writes its patch after
    them) and where they end."""
    changes: list[RawChange] = []
    position = 0
    while out.startswith(b":", position):
        end = out.find(b"\0", position)
        fields = out[position + 1:end].split(b" ") if end >= 0 else []
        if len(fields) != 5 or not fields[4]:
            raise _malformed("git diff-tree --raw", out[position:position + 60])
        old_mode, new_mode, old_id, new_id, status = (f.decode("ascii") for f in fields)
        count = 2 if status[0] in "RC" else 1
        paths = []
        position = end + 1
        for _ in range(count):
            end = out.find(b"\0", position)
            if end < 0:
                raise _malformed("git diff-tree --raw", out[position:position + 60])
            paths.append(out[position:end])
            position = end + 1
        changes.append(RawChange(old_mode, new_mode, old_id, new_id, status[0], paths[-1],
                                 paths[0] if count == 2 else None))
    return changes, position


def index_records(out: bytes) -> list[IndexEntry]:
    """The records of `ls-files -s -z` output."""
    entries = []
    for row in out.split(b"\0"):
        if not row:
            continue
        meta, tab, path = row.partition(b"\t")
        fields = meta.split(b" ")
        if not tab or len(fields) != 3 or not fields[2].isdigit():
            raise _malformed("git ls-files -s", row[:60])
        entries.append(IndexEntry(fields[0].decode("ascii"), fields[1].decode("ascii"),
                                  int(fields[2]), path))
    return entries


def tree_records(out: bytes) -> list[TreeEntry]:
    """The records of `ls-tree -z` output (`-r` or not; not `--long` or `--name-only`)."""
    entries = []
    for row in out.split(b"\0"):
        if not row:
            continue
        meta, tab, path = row.partition(b"\t")
        fields = meta.split(b" ")
        if not tab or len(fields) != 3:
            raise _malformed("git ls-tree", row[:60])
        mode, kind, object_id = (f.decode("ascii") for f in fields)
        entries.append(TreeEntry(mode, kind, object_id, path))
    return entries


def _malformed(listing: str, sample: bytes) -> WorkspaceError:
    return WorkspaceError(f"`{listing}` wrote a record navtui cannot read ({sample!r}); "
                          "is this git older than 2.20?")
