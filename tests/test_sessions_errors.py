"""`navtui sessions` / `navtui export` on a path that is no repository: a clear error, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_cli import navtui


@pytest.mark.parametrize("args", [
    ("sessions", "{missing}"),
    ("sessions", "{file}"),
    ("sessions", "--json", "{missing}"),
    ("export", "abc", "--format", "replay", "--repo", "{missing}"),
])
def test_no_such_repository_is_a_clear_error(args, tmp_path: Path):
    missing, file = tmp_path / "nonexistent", tmp_path / "file.txt"
    file.write_text("not a repo\n")
    result = navtui(*(a.format(missing=missing, file=file) for a in args))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    target = file if "{file}" in args else missing
    reason = "is not a directory" if "{file}" in args else "does not exist"
    assert result.stderr == (f"navtui: {target} {reason}: pass the path of the repository "
                             "navtui ran on\n")


def test_sessions_in_a_directory_that_is_no_repository(tmp_path: Path):
    result = navtui("sessions", str(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "is not a git repository" in result.stderr


def test_sessions_list_shows_an_issue_with_escapes_visibly(git_repo: Path, tmp_path: Path):
    from tests.test_session import write_script

    script = write_script(tmp_path / "s.jsonl", ["Thought: done\nAction: submit"])
    issue = "title \x1b]0;owned\x07 here"
    assert navtui("--auto", "--script", str(script), "--issue", issue, str(git_repo)).returncode == 0
    listed = navtui("sessions", str(git_repo))
    assert listed.returncode == 0
    assert "title ␛]0;owned␇ here" in listed.stdout and "\x1b" not in listed.stdout
