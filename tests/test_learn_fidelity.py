"""Training rows are faithful for every kind of session: server and replay sessions are checked
like local ones (the profile's content, the digest of the prompt built), an edited thinking-mode
reply keeps the `<think>` form the model used, the text dialect's rows end at `Observation:`
with nothing after it, and a `--model` other than the session's is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_core.actions import Bash
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.exports import ExportError, export
from agent_core.learn.history import Label, ModelTurn
from agent_core.profiles import load_profile
from agent_core.learn.provenance import is_main_process, model_mismatches
from agent_core.prompt_types import Prompt
from agent_core.steps import Approve, EditAction, Reject
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from tests.fixtures.servers import Reply, content_chunk, sse, usage_chunk
from tests.test_prompt_log import logged
from tests.test_session import make_session, write_script

PROFILE = "extends: r2e-card\n"
THINKING = ('<think>\nThe tests come first.\n</think>\n\n<tool_call>\n{"name": "bash", '
            '"arguments": {"command": "ls"}}\n</tool_call>')


def server_session(repo: Path, scripted_http, profile: Path) -> Path:
    """A text-dialect session against an OpenAI-compatible server, with a profile file."""
    for text in ("Thought: look\nAction: bash ls", "Thought: rm\nAction: bash rm -rf calc"):
        scripted_http.queue(Reply(body=sse(content_chunk(text), usage_chunk(50, 5), "[DONE]")))
    backend = OpenAIBackend(scripted_http.base_url, "m", max_retries=0)
    session, log, _ = logged(repo, backend, dialect="text", prompt_profile=str(profile))
    try:
        session.start()
        session.decide(session.propose() and Approve())
        session.decide(session.propose() and Reject("keep the code"))
    finally:
        session.close()
    return log


def test_a_server_session_is_checked_like_a_local_one(git_repo, scripted_http, tmp_path):
    profile = tmp_path / "mine.yaml"
    profile.write_text(PROFILE)
    log = server_session(git_repo, scripted_http, profile)
    rows = export(read_trajectory(log), "kto")
    assert [r["label"] for r in rows] == [True, False]
    profile.write_text(PROFILE + "exit_code_template: \"[exit {{exit_code}}]\"\n")  # edited since
    load_profile.cache_clear()  # as a new process reads it
    with pytest.raises(ExportError, match="profile .* is not the one the session used"):
        export(read_trajectory(log), "kto")


def test_a_replay_session_whose_prompt_changed_is_refused(git_repo, tmp_path, tiny_tokenizer_dir):
    """The replay backend logs the digest of the messages: a prompt rebuilt differently (here
    the logged digest no longer matches) is refused, as for a local model."""
    session, _, _ = make_session(git_repo, write_script(tmp_path / "s.jsonl", [THINKING]),
                                 "toolcall")
    log = tmp_path / "session.jsonl"
    session.subscribe(TrajectoryWriter(log))
    try:
        session.decide(session.propose() and Approve())
    finally:
        session.close()
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    sent = [e for e in entries if e.get("type") == "PromptSent"]
    assert sent and sent[0]["digest_of"] == "messages" and sent[0]["prompt_sha256"]
    for entry in sent:
        entry["prompt_sha256"] = "0" * 64
    log.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    with pytest.raises(ExportError, match="differs from the one the session built"):
        export(read_trajectory(log), "sft", tokenizer=str(tiny_tokenizer_dir))


def test_an_edited_thinking_reply_keeps_its_think_block(git_repo, tmp_path, tiny_tokenizer_dir):
    session, _, _ = make_session(git_repo, write_script(tmp_path / "s.jsonl", [THINKING]),
                                 "toolcall")
    log = tmp_path / "session.jsonl"
    session.subscribe(TrajectoryWriter(log))
    try:
        session.decide(session.propose() and EditAction(Bash("cat calc/ops.py")))
    finally:
        session.close()
    [pair] = export(read_trajectory(log), "dpo", tokenizer=str(tiny_tokenizer_dir))
    think = "<think>\nThe tests come first.\n</think>\n\n<tool_call>\n"
    assert pair["rejected"].startswith(think) and pair["chosen"].startswith(think)
    assert '"cat calc/ops.py"' in pair["chosen"] and pair["chosen"].count("tests come first") == 1
    [sft] = export(read_trajectory(log), "sft", tokenizer=str(tiny_tokenizer_dir))
    assert sft["completion"] == pair["chosen"]


@pytest.mark.slow
def test_text_rows_end_at_observation_with_no_end_of_text_after_it(tiny_model_dir, tmp_path):
    """trl appends the tokenizer's EOS (`<|im_end|>` here) to completions that lack it; the text
    dialect's completions end at `Observation:` and must be trained that way."""
    from datasets import Dataset
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agent_core.learn.recipes import Schedule, row_tokenizer, trainer_for
    from agent_core.learn.rows import TEXT_TURN_END

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny_model_dir),
                           LoraConfig(r=2, target_modules=["q_proj"], task_type="CAUSAL_LM"))
    rows = Dataset.from_list([{"prompt": "## Your turn:\nThought:",
                               "completion": f" look{TEXT_TURN_END}"}] * 2)
    trainer = trainer_for("sft", model, row_tokenizer(tokenizer, TEXT_TURN_END), rows,
                          work_dir=tmp_path / "w", max_length=None,
                          schedule=Schedule(1e-4, 1, 1, 1, 1))
    ids = trainer.train_dataset[0]["input_ids"]
    assert tokenizer.decode(ids).endswith("Thought: look\n\nObservation:")
    assert tokenizer.eos_token == "<|im_end|>"  # the caller's tokenizer is left as it was


def turn(session: str, identity: dict) -> ModelTurn:
    return ModelTurn(session=session, index=1, prompt=Prompt(text="p"), reply="r",
                     label=Label.APPROVED, identity=identity)


def test_a_model_other_than_the_sessions_is_named(tmp_path):
    same = tmp_path / "base"
    same.mkdir()
    turns = [turn("s1", {"model": {"ref": "Qwen/Qwen3-8B"}}),
             turn("s2", {"model": {"ref": "Qwen/Qwen3-8B"}}),
             turn("s3", {"model": {"ref": "other-name", "path": str(same)}}),
             turn("s4", {})]
    [warning] = model_mismatches(str(same), turns)
    assert "Qwen/Qwen3-8B" in warning and "sessions s1, s2" in warning
    assert model_mismatches("Qwen/Qwen3-8B", turns[:2]) == []


def test_only_the_main_process_of_a_launch_reports(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert is_main_process()
    monkeypatch.setenv("RANK", "2")
    assert not is_main_process()
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "1")  # rank 0 of the whole run: the main process
    assert is_main_process()
