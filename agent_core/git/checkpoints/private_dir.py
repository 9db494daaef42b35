"""What a private git directory of navtui's may hold, and a check that it holds nothing else.

navtui's raw views (`.git/navtui/raw-git`, `.git/navtui/checkpoints/*.nested/*.raw-git`) are
git directories git reads on every private-index command. A file there that navtui did not write
can make git read another directory's config (`commondir`), run a filter or fsmonitor (`config`,
`info/attributes`), read objects from elsewhere (`objects/info/alternates`) or take different
files (`info/sparse-checkout`, `info/grafts`). Anything outside `LAYOUT` is removed before git
runs there, and the files navtui writes are checked against what it wrote (`matches`).

The check is a handful of `lstat` calls: the stamps of the directories and files navtui made; a
full listing only when one of them moved.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

# Entry -> what it is: "file", "link", or the entries of a directory (an empty tuple: empty).
LAYOUT: dict[str, object] = {
    "HEAD": "file",
    "config": "file",
    "info": {"attributes": "file", "exclude": "link"},
    "refs": {},
}
# The shared part of a private index navtui keeps split, which git writes into the raw view
# (plain files; whether one was changed is the snapshot engine's to tell, by their stamps).
SHARED_INDEX = re.compile(r"sharedindex\.[0-9a-f]{40}(?:[0-9a-f]{24})?")

Stamp = tuple[tuple[int, int, int, int] | None, ...]


def _lstat(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode


def stamp(path: Path) -> Stamp:
    """The stat stamps of the private dir's directories and files (no reads)."""
    return tuple(_lstat(path / name) for name in (
        "", "HEAD", "config", "info", "info/attributes", "info/exclude", "refs",
    ))


def foreign_entries(path: Path) -> list[str]:
    """Names (relative to `path`) of what is there that `LAYOUT` does not allow, or of the
    wrong kind (a directory where a file belongs, a file where a link belongs, ...)."""
    found: list[str] = []

    def walk(directory: Path, layout: dict[str, object], prefix: str) -> None:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            name = prefix + entry.name
            kind = layout.get(entry.name)
            if kind is None:
                shared = not prefix and SHARED_INDEX.fullmatch(entry.name) is not None
                if shared and not entry.is_symlink() and entry.is_file(follow_symlinks=False):
                    continue
                found.append(name)
            elif kind == "file":
                if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                    found.append(name)
            elif kind == "link":
                if not entry.is_symlink():
                    found.append(name)
            elif entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                found.append(name)
            else:
                assert isinstance(kind, dict)
                walk(Path(entry.path), kind, name + "/")

    walk(path, LAYOUT, "")
    return sorted(found)


def remove(path: Path, names: list[str]) -> None:
    """Remove `names` (from `foreign_entries`) inside `path`, never following a link."""
    for name in names:
        target = path / name
        try:
            if stat.S_ISDIR(os.lstat(target).st_mode):
                shutil.rmtree(target)
            else:
                target.unlink()
        except FileNotFoundError:
            continue


def repair_note(path: Path, names: list[str], changed: list[str]) -> str:
    """The line that tells the user what was found and undone in the private dir `path`."""
    what = [f"{path / name} (not written by navtui: removed)" for name in names]
    what += [f"{path / name} (rewritten by someone else: written again)" for name in changed]
    return (
        "navtui's private git dir was tampered with, so it was rebuilt before git ran there "
        "(nothing in it ran): " + "; ".join(what)
    )


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
