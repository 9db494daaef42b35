"""One endpoint in front of many replicas (vLLM data parallel behind a router, SGLang's router):
every request carries its session's id, so a session-affine router keeps a session's turns on
one replica (its prefix cache stays warm), and a replica that goes away loses no turn: the
router sends the session on to another and the batch finishes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.backends.backoff import ServerBackoff
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.batch import Batch, BatchOptions, Instance
from agent_core.session import SessionConfig
from tests.fixtures.replicas import Replica, Router
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[tuple[Router, list[Replica]]]:
    replicas = [Replica("a", stop_after=getattr(request, "param", None)), Replica("b")]
    router = Router(replicas)
    yield router, replicas
    router.stop()
    for replica in replicas:
        try:
            replica.stop()
        except OSError:
            pass


def run_batch(tmp_path: Path, router: Router, count: int, workers: int) -> list[str]:
    repo = make_repo(tmp_path / "repo", BUGGY_PROJECT)
    base = git(repo, "rev-parse", "HEAD").strip()
    instances = [Instance(f"calc__{i}", repo, base, "average is off by one") for i in range(count)]
    shared = ServerBackoff()
    config = SessionConfig(dialect="toolcall", command_timeout=60.0,
                           backend_info={"backend": "openai", "model": "navigator-8b"})
    batch = Batch(BatchOptions(
        output_dir=tmp_path / "out", config=config, workers=workers,
        make_backend=lambda _: OpenAIBackend(f"{router.url}/v1", "navigator-8b",
                                             shared_backoff=shared)))
    return [result.status for result in batch.run(instances)]


def test_a_session_affine_router_keeps_each_sessions_turns_on_one_replica(
    tmp_path: Path, cluster: tuple[Router, list[Replica]]
) -> None:
    router, replicas = cluster
    statuses = run_batch(tmp_path, router, count=8, workers=4)
    assert statuses == ["submitted"] * 8
    assert len(router.routed) == 8, "every request named its session"
    assert all(len(set(path)) == 1 and len(path) >= 2 for path in router.routed.values())
    assert all(replica.sessions for replica in replicas), "the sessions spread over both"


@pytest.mark.parametrize("cluster", [1], indirect=True)
def test_a_replica_that_goes_away_mid_batch_loses_no_turn(
    tmp_path: Path, cluster: tuple[Router, list[Replica]]
) -> None:
    router, replicas = cluster
    # Ten sessions of two turns: some start on a (all on b: one run in a thousand).
    statuses = run_batch(tmp_path, router, count=10, workers=4)
    assert statuses == ["submitted"] * 10
    assert len(replicas[0].sessions) == 1, "replica a went away after one turn"
    moved = [path for path in router.routed.values() if "a" in path and "b" in path]
    assert moved and all(path.index("b") > path.index("a") for path in moved)
    turns = sum(len(path) for path in router.routed.values())
    assert turns == len(replicas[0].sessions) + len(replicas[1].sessions), (
        "every turn was answered once")
