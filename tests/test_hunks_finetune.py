"""`navtui finetune` learns from a hunk review: the rows it trains on are the review's pair (the
proposal with only the kept hunks chosen, the full proposal rejected), on the tiny real model."""

from __future__ import annotations

import pytest

from agent_core.hunks import DROP, review_of
from agent_core.trajectory import TrajectoryWriter
from tests.fixtures.repos import make_repo
from tests.test_hunks import NEW_BLOCK, ORIGINAL
from tests.test_learn import TRAIN, finetune, summary_of
from tests.test_session import make_session, write_script

pytestmark = pytest.mark.slow


def test_finetune_trains_on_the_hunk_review(tmp_path, tiny_model_dir):
    repo = make_repo(tmp_path / "repo", {"notes.txt": ORIGINAL})
    raw = f"Thought: two lines.\nAction: edit notes.txt 3 10\n{NEW_BLOCK.rstrip()}"
    session, _, _ = make_session(repo, write_script(tmp_path / "s.jsonl", [raw]), "text")
    session.subscribe(TrajectoryWriter(repo / ".git" / "navtui" / "sessions" / f"{session.id}.jsonl"))
    try:
        review = review_of(session.executor.files, session.propose().step.action)
        session.decide(review.decision({1: DROP}))
    finally:
        session.close()
    summary = summary_of(finetune(repo, tiny_model_dir, tmp_path / "dpo", "--method", "dpo", "--json",
                                  *TRAIN))
    assert summary["method"] == "dpo" and summary["rows"] == 1
    assert summary["after"] > summary["before"]
