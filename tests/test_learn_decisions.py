"""Training uses every decision, on the tiny real Qwen3 with real trl runs: rejections lower the
likelihood of what was rejected (as DPO pairs against the reply approved next, or as KTO false
rows when none was), the held-out split is whole sessions for every phase, and each kind of
decision is reported before and after with trl's own evaluation metrics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.learn.logprob import mean_logprob
from agent_core.trajectory import list_sessions
from tests.fixtures.repos import BUGGY_PROJECT, make_repo
from tests.test_cli import navtui
from tests.test_learn import ANSWERS, ISSUE, REPLIES, export_rows, finetune, summary_of
from tests.test_session import write_script

pytestmark = pytest.mark.slow

FAST = ("--lr", "5e-3", "--max-steps", "3")
# approve, edit, then a rejection no reply was approved after: DPO has no pair for it.
LAST_REJECTED = [REPLIES[0], REPLIES[2], REPLIES[1], REPLIES[3]]
LAST_ANSWERS = "a\ne\nAction: bash cat calc/ops.py\n.\nr\nnever delete code\nq\n"


def run_session(repo: Path, root: Path, replies: list[str], answers: str) -> None:
    script = write_script(root / f"script-{len(list_sessions(repo))}.jsonl", replies)
    result = navtui("--plain", "--dialect", "text", "--script", str(script), "--issue", ISSUE,
                    str(repo), stdin=answers)
    assert result.returncode == 3, result.stderr


@pytest.fixture(scope="module")
def rejected_then_edited(tmp_path_factory) -> Path:
    """approve, reject `rm -rf` ("never delete code"), edit, approve: the rejection's pair is the
    edit that came next."""
    root = tmp_path_factory.mktemp("paired")
    repo = make_repo(root / "repo", BUGGY_PROJECT)
    run_session(repo, root, REPLIES, ANSWERS)
    return repo


def rejected_likelihood(repo: Path, model: Path, adapter: Path, tmp_path: Path) -> list[float]:
    """Mean per-token log-probability of the rejected `rm -rf` completion under its prompt,
    with the base model and then with the adapter."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    [row] = [r for r in export_rows(repo, "kto", tmp_path)
             if not r["label"] and "rm -rf" in r["completion"]]
    tokenizer = AutoTokenizer.from_pretrained(model)
    loaded = AutoModelForCausalLM.from_pretrained(model)
    found = [mean_logprob(loaded, tokenizer, [(row["prompt"], row["completion"])])]
    loaded = PeftModel.from_pretrained(loaded, str(adapter))
    found.append(mean_logprob(loaded, tokenizer, [(row["prompt"], row["completion"])]))
    return found


@pytest.mark.timeout(900)  # two phases and trl's evaluations on 2 shared CPU cores
@pytest.mark.parametrize("shape", ["paired", "unpaired"])
def test_auto_trains_on_the_rejection_and_makes_it_less_likely(
    shape, rejected_then_edited, tiny_model_dir, tmp_path
):
    if shape == "paired":
        repo, method = rejected_then_edited, "sft+dpo"
    else:
        repo, method = make_repo(tmp_path / "repo", BUGGY_PROJECT), "sft+kto"
        run_session(repo, tmp_path, LAST_REJECTED, LAST_ANSWERS)
    out = tmp_path / "adapter"
    # (KTO's pull on one false row is gentle: more steps than DPO's make its margin plain)
    steps = ("--lr", "5e-3", "--max-steps", "3" if shape == "paired" else "8")
    summary = summary_of(finetune(repo, tiny_model_dir, out, *steps))
    assert summary["method"] == method
    before, after = rejected_likelihood(repo, tiny_model_dir, out, tmp_path)
    assert after < before, (before, after)
    rejected = summary["decisions"]["train"]
    assert rejected["after"]["rejected"]["logps"] < rejected["before"]["rejected"]["logps"]
    if shape == "paired":  # the rejection's pair: the edit that came next, at that prompt
        [pair] = [r for r in export_rows(repo, "dpo", tmp_path) if "rm -rf" in r["rejected"]]
        assert "bash cat calc/ops.py" in pair["chosen"]
        assert "never delete code" not in pair["prompt"]


@pytest.mark.timeout(900)
def test_each_decision_is_reported_before_and_after_and_a_wrong_move_warns(
    rejected_then_edited, tiny_model_dir, tmp_path
):
    """SFT alone on the approvals makes the rejected `rm -rf` likelier too (it shares their
    form): trl's logps say so, and the run warns."""
    result = finetune(rejected_then_edited, tiny_model_dir, tmp_path / "sft", "--method", "sft",
                      *FAST)
    summary = summary_of(result)
    decisions = summary["decisions"]["train"]
    assert set(decisions["before"]) == {"approved", "edited", "original", "rejected"}
    for name, figures in decisions["before"].items():
        assert {"logps", "rewards", "rows"} <= set(figures), name
        assert figures["rewards"] == 0.0  # a fresh LoRA is its own reference
    assert decisions["after"]["approved"]["logps"] > decisions["before"]["approved"]["logps"]
    assert decisions["after"]["rejected"]["logps"] > decisions["before"]["rejected"]["logps"]
    [warning] = [w for w in summary["warnings"] if w.startswith("train rejected")]
    assert "more likely" in warning
    assert "navtui: warning: train rejected completions got more likely" in result.stderr


@pytest.mark.timeout(900)
def test_the_held_out_sessions_are_out_of_every_phase(tiny_model_dir, tmp_path):
    """Two sessions: the newer is held out whole, from SFT and DPO alike; the per-method
    defaults (trl's LoRA rates) and the KTO-free plan are in the manifest."""
    repo = make_repo(tmp_path / "repo", BUGGY_PROJECT)
    run_session(repo, tmp_path, REPLIES, ANSWERS)
    run_session(repo, tmp_path, REPLIES, ANSWERS)
    older, newer = [s.id for s in list_sessions(repo)]
    out = tmp_path / "adapter"
    summary = summary_of(finetune(repo, tiny_model_dir, out, "--holdout", "0.5",
                                  "--max-steps", "1"))
    assert summary["method"] == "sft+dpo" and summary["held_out_sessions"] == [newer]
    manifest = json.loads((out / "navtui-adapter.json").read_text())
    assert manifest["held_out"]["sessions"] == [newer]
    assert manifest["held_out"]["turns"] and all(
        t.startswith(newer) for t in manifest["held_out"]["turns"])
    # sft: 3 rows a session; dpo: the edit pair and the rejection pair
    assert manifest["rows"] == {"sft": {"train": 3, "held_out": 3},
                                "dpo": {"train": 2, "held_out": 2}}
    phases = manifest["hyperparameters"]["phases"]
    assert (phases["sft"]["lr"], phases["dpo"]["lr"]) == (2e-4, 5e-6)
    assert phases["dpo"]["beta"] == 0.1 and manifest["hyperparameters"]["seed"] == 0
    assert phases["dpo"]["loss_type"] == ["sigmoid"]  # after the SFT phase: plain DPO
    assert (phases["sft"]["batch"], phases["dpo"]["batch"]) == (1, 1)
    assert manifest["hyperparameters"]["precision"] == {"bf16": False, "fp16": False}
    hashes = manifest["hashes"]
    assert len(hashes["base"]["sha256"]) == 64 and hashes["parent"] is None
    assert len(hashes["tokenizer_sha256"]) == 64 and len(hashes["chat_template_sha256"]) == 64
    assert manifest["versions"]["navtui"]
    held = summary["decisions"]["held_out"]
    assert set(held["before"]) == {"approved", "edited", "original", "rejected"}
    assert older not in " ".join(manifest["held_out"]["turns"])


def test_one_session_cannot_be_split(rejected_then_edited, tiny_model_dir, tmp_path):
    result = finetune(rejected_then_edited, tiny_model_dir, tmp_path / "out", "--holdout", "0.5")
    assert result.returncode == 1 and "whole sessions" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(900)
def test_a_secondary_process_of_a_launch_prints_and_writes_nothing(
    rejected_then_edited, tiny_model_dir, tmp_path
):
    """Under torchrun / accelerate every process trains; only rank 0 reports and writes."""
    out = tmp_path / "adapter"
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "app.cli", "finetune", str(rejected_then_edited),
         "--model", str(tiny_model_dir), "--out", str(out), "--method", "sft", "--max-steps",
         "1", "--json"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "RANK": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "" and "warning" not in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []
