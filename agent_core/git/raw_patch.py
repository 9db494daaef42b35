"""One `git diff-tree --raw -p` read as what a checkpoint needs: the raw changes as
`diff-tree -r -z --no-renames` writes them, the new trees, and the patch one file at a time."""

from __future__ import annotations

from dataclasses import dataclass

TREE_MODE = b"040000"
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
    entries: list[tuple[bytes, list[bytes]]] = []
    trees: list[str] = []
    position = 0
    while out.startswith(b":", position):
        end = out.find(b"\0", position)
        if end < 0:
            return None
        meta = out[position + 1:end]
        fields = meta.split(b" ")
        if len(fields) != 5:
            return None
        count = 2 if fields[4][:1] in (b"R", b"C") else 1
        paths = []
        position = end + 1
        for _ in range(count):
            end = out.find(b"\0", position)
            if end < 0:
                return None
            paths.append(out[position:end])
            position = end + 1
        if TREE_MODE in (fields[0], fields[1]):
            if fields[1] == TREE_MODE:
                trees.append(fields[3].decode("ascii"))
        else:
            entries.append((meta, paths))
    if out.startswith(b"\0", position):
        position += 1
    patch = out[position:]
    chunks = _split_sections(patch)
    if len(chunks) != len(entries):
        return None
    raw: list[tuple[bytes, bytes]] = []
    renamed: set[str] = set()
    for meta, paths in entries:
        if len(paths) == 2:
            old_mode, new_mode, old_id, new_id, _ = meta.split(b" ")
            null = b"0" * len(old_id)
            raw.append((paths[0], b"%s 000000 %s %s D" % (old_mode, old_id, null)))
            raw.append((paths[1], b"000000 %s %s %s A" % (new_mode, null, new_id)))
            renamed.update(p.decode("utf-8", "surrogateescape") for p in paths)
        else:
            raw.append((paths[0], meta))
    raw.sort()
    return RawPatch(
        raw=b"".join(b":" + meta + b"\0" + path + b"\0" for path, meta in raw),
        new_trees=trees,
        sections=[
            (tuple(p.decode("utf-8", "surrogateescape") for p in paths), chunk)
            for (_, paths), chunk in zip(entries, chunks)
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
