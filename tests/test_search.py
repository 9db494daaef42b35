"""search: real `grep -rn` over a real repo, .git skipped, results capped with a count."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core.executor.paths import Confinement
from agent_core.executor.search import search


@pytest.fixture
def paths(git_repo: Path) -> Confinement:
    return Confinement(git_repo)


def test_matches_as_path_line_text(paths: Confinement):
    obs = search(paths, "def average")
    assert obs.exit_code == 0 and not obs.truncated
    assert obs.output.splitlines() == [
        "Found 1 matching line(s) for 'def average' in .:",
        "calc/ops.py:5:def average(values):",
    ]


def test_skips_dot_git_and_binary_files(paths: Confinement, git_repo: Path):
    (git_repo / "data.bin").write_bytes(b"\x00needle\x00")
    (git_repo / ".git" / "needle.txt").write_text("needle\n")
    (git_repo / "notes.txt").write_text("a needle here\n")
    obs = search(paths, "needle")
    assert obs.output.splitlines()[1:] == ["notes.txt:1:a needle here"]
    assert "No matches" in search(paths, "repositoryformatversion").output


def test_limited_to_a_subdirectory_or_file(paths: Confinement):
    assert search(paths, "average", "tests").output.count("tests/test_ops.py:") == 3
    single = search(paths, "average", "/testbed/calc/ops.py")
    assert single.output.splitlines()[1] == "calc/ops.py:5:def average(values):"


def test_cap_reports_how_many_were_cut(paths: Confinement, git_repo: Path):
    (git_repo / "many.txt").write_text("hit\n" * 250)
    obs = search(paths, "hit", "many.txt", limit=100)
    lines = obs.output.splitlines()
    assert lines[0] == "Found 250 matching line(s) for 'hit' in many.txt:"
    assert len(lines) == 1 + 100 + 1
    assert lines[-1].startswith("[150 more matching line(s) cut; showing the first 100.")
    assert obs.truncated


def test_long_matching_lines_cut(paths: Confinement, git_repo: Path):
    (git_repo / "min.js").write_text("var q=1;" + "x" * 5000 + "\n")
    line = search(paths, "var q").output.splitlines()[1]
    assert len(line) < 400 and line.endswith("[... line cut]")


def test_no_match_bad_regex_missing_path_escape(paths: Confinement):
    none = search(paths, "zzz_not_there")
    assert none.exit_code == 1 and none.error is None and "No matches found" in none.output
    bad = search(paths, "a\\{1")
    assert bad.error.startswith("grep failed") and "regular expression" in bad.error
    assert "does not exist" in search(paths, "x", "nowhere").error
    assert "outside the repository" in search(paths, "root", "../../etc").error
    assert "empty search pattern" in search(paths, "").error


def test_pattern_starting_with_dash_is_a_pattern(paths: Confinement, git_repo: Path):
    (git_repo / "flags.txt").write_text("use -rf carefully\n")
    assert "flags.txt:1:use -rf carefully" in search(paths, "-rf").output


def test_symlinks_inside_the_tree_are_not_followed(paths: Confinement, git_repo: Path):
    os.symlink("/etc", git_repo / "etc_link")
    assert "etc_link" not in search(paths, "root").output
