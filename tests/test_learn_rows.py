"""Chat-dialect training rows: the prompt is the chat template's rendering of what the model
read, ending with the generation prompt; the completion ends the turn as the template does."""

from __future__ import annotations

import json

from agent_core.actions import Bash
from agent_core.exports import ExportError, export
from agent_core.learn.history import model_turns
from agent_core.steps import Approve, EditAction, Reject
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from tests.test_session import make_session, write_script

CALLS = [
    '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
    '<tool_call>\n{"name": "bash", "arguments": {"command": "rm -rf calc"}}\n</tool_call>',
    '<tool_call>\n{"name": "bash", "arguments": {"command": "cat tests/test_ops.py"}}\n</tool_call>',
]


def toolcall_log(repo, tmp_path):
    session, _, _ = make_session(repo, write_script(tmp_path / "s.jsonl", CALLS), "toolcall")
    log = tmp_path / "session.jsonl"
    session.subscribe(TrajectoryWriter(log))
    try:
        session.decide(session.propose() and Approve())
        session.decide(session.propose() and Reject("no"))
        session.decide(session.propose() and EditAction(Bash("cat calc/ops.py")))
    finally:
        session.close()
    return read_trajectory(log)


def test_chat_rows_are_the_rendered_template_text(git_repo, tmp_path, tiny_tokenizer_dir):
    from transformers import AutoTokenizer

    trajectory = toolcall_log(git_repo, tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_dir)
    turns = model_turns(trajectory)
    rows = export(trajectory, "sft", tokenizer=str(tiny_tokenizer_dir))
    assert len(rows) == 2
    for row, turn in zip(rows, [turns[0], turns[2]]):
        expected = tokenizer.apply_chat_template(
            turn.prompt.messages, tools=turn.prompt.tools, add_generation_prompt=True,
            tokenize=False,
        )
        assert row["prompt"] == expected and row["prompt"].endswith("<|im_start|>assistant\n")
        assert row["completion"].endswith("</tool_call><|im_end|>")
    assert rows[0]["completion"] == CALLS[0] + "<|im_end|>"
    assert '"cat calc/ops.py"' in rows[1]["completion"]
    assert "rm -rf calc" in rows[1]["prompt"]  # the rejected call, in the context it had
    refused, pair = export(trajectory, "dpo", tokenizer=str(tiny_tokenizer_dir))
    assert pair["rejected"] == CALLS[2] + "<|im_end|>" and pair["chosen"] == rows[1]["completion"]
    assert refused["rejected"] == CALLS[1] + "<|im_end|>" and refused["chosen"] == pair["chosen"]
    assert json.dumps(pair)


def test_chat_rows_without_a_known_tokenizer_say_what_to_pass(git_repo, tmp_path):
    trajectory = toolcall_log(git_repo, tmp_path)
    try:
        export(trajectory, "kto")
    except ExportError as error:
        assert "--tokenizer" in str(error)
    else:
        raise AssertionError("a chat session exported without a tokenizer")


def test_a_prompt_that_no_longer_matches_the_log_is_refused(git_repo, tmp_path):
    """A rebuilt prompt whose SHA-256 differs from the logged one is not exported as exact."""
    session, _, _ = make_session(git_repo, write_script(tmp_path / "s.jsonl", [
        "Thought: look\nAction: bash ls"]), "text")
    log = tmp_path / "session.jsonl"
    session.subscribe(TrajectoryWriter(log))
    try:
        session.decide(session.propose() and Approve())
    finally:
        session.close()
    [row] = export(read_trajectory(log), "sft")
    lines = log.read_text().splitlines()
    tampered = [json.loads(line) for line in lines]
    for entry in tampered:
        if entry.get("type") == "PromptSent":
            entry["sha256"] = "0" * 64
    log.write_text("".join(json.dumps(entry) + "\n" for entry in tampered))
    try:
        export(read_trajectory(log), "sft")
    except ExportError as error:
        assert "differs from the one the model read" in str(error)
    else:
        raise AssertionError(f"exported {row['prompt'][:40]!r} against a different digest")
