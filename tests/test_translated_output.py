"""The checkpoint tree an export re-runs a translated action on stays inside its scratch
directory, also where Python's tar extraction filters are missing (before 3.11.4)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from agent_core.translated_output import TreeUnavailable, _check_inside


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


@pytest.mark.parametrize("hostile", [
    member("../escape.txt"),
    member("/etc/passwd-copy"),
    member("up", tarfile.SYMTYPE, "../.."),
    member("abs", tarfile.SYMTYPE, "/etc"),
    member("hard", tarfile.LNKTYPE, "../outside"),
    member("dev", tarfile.CHRTYPE),
])
def test_a_member_leading_outside_is_refused(tmp_path: Path, hostile: tarfile.TarInfo):
    with pytest.raises(TreeUnavailable):
        _check_inside(tmp_path, hostile)


def test_a_link_inside_is_followed_when_later_members_are_checked(tmp_path: Path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "l").symlink_to("..")  # d/l is the root itself: inside
    _check_inside(tmp_path, member("d/l/file.txt"))
    with pytest.raises(TreeUnavailable):  # d/l/l2 -> .. is the root's parent
        _check_inside(tmp_path, member("d/l/l2", tarfile.SYMTYPE, ".."))


def test_files_dirs_and_links_inside_pass(tmp_path: Path):
    for ok in (member("src/a.py"), member("src", tarfile.DIRTYPE),
               member("src/b", tarfile.SYMTYPE, "a.py"), member("c", tarfile.LNKTYPE, "src/a.py")):
        _check_inside(tmp_path, ok)
