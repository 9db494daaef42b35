"""Learning from the user, end to end on a tiny real model: a session decided through `--plain`
(approve, reject, edit) exports SFT / DPO / KTO rows with the exact prompts the model read, and
`navtui finetune` trains each method, writes an adapter that reloads, refuses to overwrite, and
leaves nothing behind when interrupted."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.backends.identity import text_sha256
from agent_core.events import PromptSent
from agent_core.learn.adapter_dir import MANIFEST_KEYS
from agent_core.trajectory import list_sessions, read_trajectory
from tests.fixtures.repos import BUGGY_PROJECT, make_repo
from tests.test_cli import navtui
from tests.test_session import write_script

pytestmark = pytest.mark.slow

ISSUE = "average([2, 4, 6]) returns 3 instead of 4."
REPLIES = [
    "Thought: Look around first.\nAction: bash ls",
    "Thought: Start over.\nAction: bash rm -rf calc",  # rejected
    "Thought: Read the tests.\nAction: bash cat tests/test_ops.py",  # edited
    "Thought: Read the code.\nAction: read calc/ops.py",
    "Thought: Done.\nAction: submit",
]
ANSWERS = "a\nr\nnever delete code\ne\nAction: bash cat calc/ops.py\n.\na\nq\n"
TRAIN = ("--max-steps", "2", "--lr", "2e-3")


def finetune(repo: Path, model: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "app.cli", "finetune", str(repo),
         "--model", str(model), "--out", str(out), *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "120"},
    )


def summary_of(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def tree_digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def decided_repo(tmp_path_factory) -> Path:
    """A repo with one text-dialect session: approved, rejected, edited, approved, then quit."""
    root = tmp_path_factory.mktemp("learn")
    repo = make_repo(root / "repo", BUGGY_PROJECT)
    script = write_script(root / "script.jsonl", REPLIES)
    result = navtui("--plain", "--dialect", "text", "--script", str(script), "--issue", ISSUE,
                    str(repo), stdin=ANSWERS)
    assert result.returncode == 3, result.stderr
    return repo


@pytest.fixture(scope="module")
def sft_adapter(decided_repo, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("adapters") / "sft"
    from tests.fixtures.models import model_artefact

    return out, summary_of(finetune(decided_repo, model_artefact(), out, "--method", "sft", *TRAIN))


def export_rows(repo: Path, fmt: str, tmp_path: Path) -> list[dict]:
    session = list_sessions(repo)[0].id
    out = tmp_path / f"{fmt}.jsonl"
    result = navtui("export", session, "--format", fmt, str(repo), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_plain_session_exports_three_formats_with_exact_prompts(decided_repo, tmp_path):
    trajectory = read_trajectory(list_sessions(decided_repo)[0].path)
    sent = {e.index: e.sha256 for e in trajectory.events if isinstance(e, PromptSent)}
    logged = set(sent.values())

    sft = export_rows(decided_repo, "sft", tmp_path)
    assert [set(r) for r in sft] == [{"prompt", "completion"}] * 3
    assert all(text_sha256(r["prompt"]) in logged for r in sft)
    assert all(r["prompt"].endswith("## Your turn:\nThought:") for r in sft)
    assert sft[0]["completion"] == " Look around first.\nAction: bash ls\n\nObservation:"
    assert "bash cat calc/ops.py" in sft[1]["completion"]  # the edit, in the text dialect
    assert "rm -rf" in sft[1]["prompt"] and "never delete code" in sft[1]["prompt"]
    assert "read calc/ops.py" in sft[2]["completion"]

    # The rejection's pair (its reply against the edit that came next, at the rejected turn's
    # prompt), then the edit's pair.
    refused, dpo = export_rows(decided_repo, "dpo", tmp_path)
    assert [set(r) for r in (refused, dpo)] == [{"prompt", "chosen", "rejected"}] * 2
    assert "rm -rf calc" in refused["rejected"] and refused["chosen"] == dpo["chosen"]
    assert text_sha256(refused["prompt"]) in logged and "rm -rf" not in refused["prompt"]
    assert dpo["prompt"] == sft[1]["prompt"]
    assert "bash cat calc/ops.py" in dpo["chosen"]
    assert "bash cat tests/test_ops.py" in dpo["rejected"]

    kto = export_rows(decided_repo, "kto", tmp_path)
    assert [(set(r), r["label"]) for r in kto] == [
        ({"prompt", "completion", "label"}, label) for label in (True, False, False, True, True)
    ]
    assert "rm -rf calc" in kto[1]["completion"]
    assert kto[2]["completion"] == dpo["rejected"] and kto[3]["completion"] == dpo["chosen"]
    assert all(text_sha256(r["prompt"]) in logged for r in kto)


def test_sessions_lists_approved_rejected_and_edited_counts(decided_repo):
    result = navtui("sessions", "--json", str(decided_repo))
    row = json.loads(result.stdout.splitlines()[0])
    assert (row["approved"], row["rejected"], row["edited"]) == (2, 1, 1)
    table = navtui("sessions", str(decided_repo)).stdout
    assert "approved" in table and "2/1/1" in table


def test_sft_raises_the_chosen_completions_and_writes_the_manifest(sft_adapter, decided_repo):
    out, summary = sft_adapter
    assert summary["out"] == str(out) and summary["method"] == "sft" and summary["rows"] == 3
    assert summary["after"] > summary["before"]
    assert {"adapter_config.json", "adapter_model.safetensors", "navtui-adapter.json"} == {
        p.name for p in out.iterdir()
    }
    manifest = json.loads((out / "navtui-adapter.json").read_text())
    assert set(MANIFEST_KEYS) <= set(manifest)
    assert manifest["sessions"] == [list_sessions(decided_repo)[0].id]
    assert manifest["hyperparameters"]["lora"]["r"] == 16  # the text model's recipe
    assert set(manifest["versions"]) == {"navtui", "trl", "peft", "transformers", "torch"}
    assert manifest["metrics"]["after"] == summary["after"] and manifest["version"] == 1


@pytest.mark.parametrize("method", ["dpo", "kto"])
def test_preference_methods_prefer_the_chosen_completion(
    method, decided_repo, tiny_model_dir, tmp_path
):
    result = finetune(decided_repo, tiny_model_dir, tmp_path / method, "--method", method,
                      "--json", *TRAIN)
    summary = summary_of(result)
    assert summary["method"] == method
    if method == "dpo":
        assert summary["after"] > summary["before"]
    else:  # KTO moves what you wanted up against what you did not (trl's rewards, per decision)
        after = summary["decisions"]["train"]["after"]
        assert after["approved"]["rewards"] > after["rejected"]["rewards"]
        assert after["edited"]["rewards"] > after["original"]["rewards"]
    # dpo: the edit's pair and the rejection's; kto: approved, rejected, the edit twice, approved
    assert summary["rows"] == {"dpo": 2, "kto": 5}[method]
    events = [json.loads(line) for line in result.stdout.splitlines()[:-1]]
    steps = [e for e in events if e["event"] == "step"]
    assert [e["step"] for e in steps] == [1, 2] and all("loss" in e and "eta" in e for e in steps)


def test_the_adapter_reloads_through_the_hf_backend_with_its_version(sft_adapter, tiny_model_dir):
    from agent_core.backends.base import Prompt
    from agent_core.backends.hf import HFBackend

    out, _ = sft_adapter
    backend = HFBackend(str(tiny_model_dir), adapter=str(out), device_map="cpu")
    try:
        assert backend.label.endswith(f"{out.name} v1")
        identity = backend.identity()["adapter"]
        assert identity["version"] == 1 and len(identity["weights_sha256"]) == 64
        assert "".join(backend.stream(Prompt(text="Thought:", max_new_tokens=3))) is not None
    finally:
        backend.close()


def test_a_second_run_into_the_same_dir_is_refused_and_keeps_the_first(
    sft_adapter, decided_repo, tiny_model_dir
):
    out, _ = sft_adapter
    before = tree_digest(out)
    result = finetune(decided_repo, tiny_model_dir, out, "--method", "sft", *TRAIN)
    assert result.returncode == 1 and "not empty" in result.stderr
    assert tree_digest(out) == before


def test_an_interrupted_run_leaves_no_dir(decided_repo, tiny_model_dir, tmp_path):
    out = tmp_path / "interrupted"
    process = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-m", "app.cli", "finetune", str(decided_repo),
         "--model", str(tiny_model_dir), "--out", str(out), "--method", "sft", "--max-steps",
         "50", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        # As from a terminal: Ctrl-C delivered even when this run's parent ignores SIGINT.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for line in process.stdout:
            if '"event": "step"' in line:
                break
        process.send_signal(signal.SIGINT)
        process.wait(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 3
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []


def test_rows_longer_than_the_window_are_counted_and_named(decided_repo, tiny_model_dir, tmp_path):
    rows = export_rows(decided_repo, "sft", tmp_path)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    lengths = [len(tokenizer.encode(r["prompt"] + r["completion"])) for r in rows]
    window = (lengths[0] + lengths[-1]) // 2  # the first row fits, the last does not
    small = tmp_path / "small-window"
    shutil.copytree(tiny_model_dir, small)
    config = json.loads((small / "config.json").read_text())
    config["max_position_embeddings"] = window
    (small / "config.json").write_text(json.dumps(config))

    result = finetune(decided_repo, small, tmp_path / "out", "--method", "sft",
                      "--max-steps", "1")
    summary = summary_of(result)
    too_long = [n for n, length in zip(("step 1", "step 3", "step 4"), lengths) if length > window]
    assert summary["rows"] == 3 - len(too_long) and len(summary["too_long"]) == len(too_long)
    assert all(any(step in entry for entry in summary["too_long"]) for step in too_long)
    assert "longer than the model's window" in result.stderr
