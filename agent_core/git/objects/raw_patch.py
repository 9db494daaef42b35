"""One `git diff-tree --raw -p` read as what a checkpoint needs: the raw changes as
`diff-tree -r -z --no-renames` writes them, the new trees, and the patch one file at a time."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.git.errors import WorkspaceError
from agent_core.git.objects.records import TREE_MODE, leading_raw_records

# `diff-tree`'s options; -t: changed trees are listed too (what the survival store copies);
# they have no patch.
RAW_PATCH_ARGS = ("-r", "-t", "-z", "--raw")


@dataclass(frozen=True)
class RawPatch:
    """`raw`: the file changes in `--no-renames` form (renames as a deletion and an addition,
    in path order); `new_trees`: ids of the trees the new side changed; `sections`: the patch
    of each file change in git's order, with the paths each one names (two for a rename);
    `renamed`: the paths in renames."""

    raw: bytes
    new_trees: list[str]
    sections: list[tuple[tuple[str, ...], bytes]]
    renamed: frozenset[str]


def parse_raw_patch(out: bytes) -> RawPatch | None:
    """The output of `diff-tree` with `RAW_PATCH_ARGS` + `-p`, or None when its parts do not
    line up."""
    try:
        changes, position = leading_raw_records(out)
    except WorkspaceError:
        return None
    files = [c for c in changes if TREE_MODE not in (c.old_mode, c.new_mode)]
    trees = [c.new_id for c in changes if c.new_mode == TREE_MODE]
    if out.startswith(b"\0", position):
        position += 1
    chunks = _split_sections(out[position:])
    if len(chunks) != len(files):
        return None
    raw: list[tuple[bytes, str]] = []
    renamed: set[str] = set()
    for change in files:
        if change.source is not None:
            null = "0" * len(change.old_id)
            raw.append((change.source, f"{change.old_mode} 000000 {change.old_id} {null} D"))
            raw.append((change.path, f"000000 {change.new_mode} {null} {change.new_id} A"))
            renamed.update(p.decode("utf-8", "surrogateescape") for p in (change.source, change.path))
        else:
            raw.append((change.path, f"{change.old_mode} {change.new_mode} {change.old_id} "
                                     f"{change.new_id} {change.status}"))
    raw.sort()
    return RawPatch(
        raw=b"".join(b":" + meta.encode("ascii") + b"\0" + path + b"\0" for path, meta in raw),
        new_trees=trees,
        sections=[
            (tuple(p.decode("utf-8", "surrogateescape")
                   for p in ((c.source, c.path) if c.source is not None else (c.path,))), chunk)
            for c, chunk in zip(files, chunks)
        ],
        renamed=frozenset(renamed),
    )


def _split_sections(patch: bytes) -> list[bytes]:
    """The patch cut before each line that starts a file's diff."""
    if not patch:
        return []
    if not patch.startswith(b"diff --git "):
        return [patch]  # lines up with nothing: the caller gives up
    starts = [0]
    position = patch.find(b"\ndiff --git ")
    while position >= 0:
        starts.append(position + 1)
        position = patch.find(b"\ndiff --git ", position + 1)
    return [patch[a:b] for a, b in zip(starts, starts[1:] + [len(patch)])]
