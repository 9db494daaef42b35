"""Batch beyond one machine: `--slice A:B` and `--shard I/N` split an instances file into parts
that never overlap and together cover it; instances as SWE-bench publishes them (`"repo":
"django/django"`) are cloned once into a cache, or found with `--repos-dir`; a repository that
cannot be found is one clear line, never a raw FileNotFoundError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.batch_select import SelectionError, select
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_batch_cli import three_instances
from tests.test_cli import navtui
from tests.test_session import FIX_SCRIPTS, FIXED_LINE, write_script


def test_shards_of_a_slice_never_overlap_and_cover_it() -> None:
    items = list(range(23))
    parts = [select(items, "2:20", f"{i}/4") for i in range(4)]
    assert sorted(x for part in parts for x in part) == list(range(2, 20))
    assert parts[0] == [2, 6, 10, 14, 18]
    assert select(items, ":3") == [0, 1, 2] and select(items, "-2:") == [21, 22]
    for bad_slice, bad_shard in (("1-3", None), (None, "4/4"), (None, "1/0"), (None, "a/b")):
        with pytest.raises(SelectionError):
            select(items, bad_slice, bad_shard)


def test_the_cli_runs_only_its_shard_of_its_slice(tmp_path: Path) -> None:
    instances, scripts, _ = three_instances(tmp_path, FIX_SCRIPTS["text"])
    output = tmp_path / "out"
    run = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                 "--output", str(output), "--slice", "1:3", "--shard", "1/2", "--json")
    assert run.returncode == 0, run.stderr
    done = [json.loads(line)["instance_id"] for line in
            (output / "predictions.jsonl").read_text().splitlines()]
    assert done == ["calc__2"]
    bad = navtui("batch", str(instances), "--script-dir", str(scripts), "--shard", "2/2")
    assert bad.returncode == 1 and "INDEX must be 0 to COUNT-1" in bad.stderr


def swebench_line(instance_id: str, repo: str, base: str) -> str:
    """A line as SWE-bench publishes it (the fields navtui ignores included)."""
    return json.dumps({
        "repo": repo, "instance_id": instance_id, "base_commit": base,
        "patch": "diff --git a/x b/x\n", "test_patch": "diff --git a/t b/t\n",
        "problem_statement": "average([2, 4, 6]) returns 3", "hints_text": "",
        "created_at": "2023-01-01T00:00:00Z", "version": "1.0",
        "FAIL_TO_PASS": "[\"tests/test_ops.py::test_average\"]", "PASS_TO_PASS": "[]",
        "environment_setup_commit": base,
    })


@pytest.fixture
def published(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """A 'remote' with acme/calc.git (a bare clone of a buggy project), an instances file naming
    it as `acme/calc`, and a replay script for it."""
    source = make_repo(tmp_path / "source", BUGGY_PROJECT)
    base = git(source, "rev-parse", "HEAD").strip()
    remote = tmp_path / "remote"
    (remote / "acme").mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(source), str(remote / "acme/calc.git"))
    instances = tmp_path / "swe.jsonl"
    instances.write_text(swebench_line("acme__calc-1", "acme/calc", base) + "\n"
                         + swebench_line("acme__calc-2", "acme/calc", base) + "\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for name in ("acme__calc-1", "acme__calc-2"):
        write_script(scripts / f"{name}.jsonl", FIX_SCRIPTS["text"])
    return instances, scripts, remote, base


def test_a_published_repo_slug_is_cloned_once_into_the_cache(tmp_path: Path, published) -> None:
    instances, scripts, remote, _ = published
    cache_home = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(cache_home)}
    run = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                 "--output", str(tmp_path / "out"), "--workers", "2",
                 "--repos-url", remote.as_uri(), env=env)
    assert run.returncode == 0, run.stderr
    predictions = [json.loads(line) for line in
                   (tmp_path / "out/predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 2 and all(f"+{FIXED_LINE}" in p["model_patch"]
                                         for p in predictions)
    cached = cache_home / "navtui/repos/acme__calc"
    assert (cached / "objects").is_dir() and not (cache_home / "navtui/repos/acme__calc.partial"
                                                  ).exists()
    # Cloned once: the cache is used again without the remote.
    (remote / "acme/calc.git").rename(remote / "gone.git")
    again = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                   "--output", str(tmp_path / "out2"), "--repos-url", remote.as_uri(), env=env)
    assert again.returncode == 0, again.stderr


def test_repos_dir_points_at_existing_clones_and_a_missing_one_is_said_clearly(
    tmp_path: Path, published
) -> None:
    instances, scripts, remote, _ = published
    clones = tmp_path / "clones"
    clones.mkdir()
    missing = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                     "--output", str(tmp_path / "out"), "--repos-dir", str(clones))
    said = " ".join(missing.stderr.split())
    assert missing.returncode == 1
    assert "no clone of acme/calc in --repos-dir" in said
    assert "acme__calc" in said and "Traceback" not in said
    git(tmp_path, "clone", "-q", str(remote / "acme/calc.git"), str(clones / "acme__calc"))
    found = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                   "--output", str(tmp_path / "out"), "--repos-dir", str(clones))
    assert found.returncode == 0, found.stderr


def test_a_repo_that_is_neither_a_directory_nor_reachable_is_one_clear_line(
    tmp_path: Path, published
) -> None:
    instances, scripts, _, base = published
    lines = [swebench_line("acme__calc-1", str(tmp_path / "nowhere"), base),
             swebench_line("acme__calc-2", "acme/calc", base)]
    instances.write_text("\n".join(lines) + "\n")
    run = navtui("batch", str(instances), "--script-dir", str(scripts), "--dialect", "text",
                 "--output", str(tmp_path / "out"), "--repos-url",
                 (tmp_path / "no-remote").as_uri(), env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    said = " ".join(run.stderr.split())
    assert run.returncode == 1
    assert "FileNotFoundError" not in said and "Traceback" not in said
    assert f"acme__calc-1: repo {tmp_path / 'nowhere'} is not a directory" in said
    assert "cannot clone acme/calc from" in said
