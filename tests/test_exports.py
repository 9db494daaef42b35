"""Exports of real logged sessions: replay re-runs to the same diff, SFT shapes, SWE-bench."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_core import formats, prompts
from agent_core.actions import Bash, Edit, StrReplaceEditor
from agent_core.exports import ExportError, export, export_sft_text, to_jsonl
from agent_core.policy import AutoPolicy
from agent_core.steps import Approve, EditAction, Reject
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from app.subcommands import add_export_args, export_main
from tests.fixtures.repos import BUGGY_PROJECT, git, make_repo
from tests.test_session import (
    BUGGY_LINE,
    FIX_SCRIPTS,
    FIXED_LINE,
    GARBAGE,
    make_session,
    repo_tests_pass,
    write_script,
)


def logged_session(repo: Path, tmp_path: Path, outputs: list[str], dialect: str, **config):
    """A real session whose events go to a log at the default place; returns (session, log)."""
    script = write_script(tmp_path / f"script-{dialect}.jsonl", outputs)
    session, _, _ = make_session(repo, script, dialect, **config)
    log = repo / ".git" / "navtui" / "sessions" / f"{session.id}.jsonl"
    writer = TrajectoryWriter(log)
    session.subscribe(writer)
    return session, log


@pytest.fixture
def closing():
    made = []
    yield made.append
    for session in made:
        session.close()


def rerun(script_rows: list[dict], dialect: str, tmp_path: Path, closing) -> tuple[Path, str]:
    """Replay an exported script with the auto policy on a fresh copy of the base repo."""
    fresh = make_repo(tmp_path / f"fresh-{dialect}", BUGGY_PROJECT)
    script = tmp_path / f"exported-{dialect}.jsonl"
    script.write_text(to_jsonl(script_rows))
    session, _, _ = make_session(fresh, script, dialect)
    closing(session)
    finished = session.run(AutoPolicy())
    return fresh, finished.patch or session.workspace.patch()


@pytest.mark.parametrize("dialect", ["text", "toolcall", "xml"])
def test_replay_export_reruns_to_the_identical_diff(dialect, git_repo, tmp_path, closing):
    session, log = logged_session(git_repo, tmp_path, FIX_SCRIPTS[dialect], dialect)
    closing(session)
    finished = session.run(AutoPolicy())
    assert finished.reason == "submitted"

    rows = export(read_trajectory(log), "replay", git_repo)
    assert rows == [{"output": o} for o in FIX_SCRIPTS[dialect]]
    fresh, patch = rerun(rows, dialect, tmp_path, closing)
    assert patch == finished.patch and FIXED_LINE in patch
    assert repo_tests_pass(fresh)


def decided_session(repo: Path, tmp_path: Path, closing):
    """A text session with a rejection, a format error, a user edit, a user command and an undo."""
    outputs = [
        "Thought: Look around.\nAction: bash ls",
        "Thought: Delete the tests.\nAction: bash rm -rf tests",  # rejected
        GARBAGE,  # format error
        "Thought: Read it.\nAction: read calc/ops.py",
        "Thought: Break more.\nAction: bash echo broken >> README.md",  # undone below
        f"Thought: Fix it.\nAction: edit calc/ops.py 7 7\n{BUGGY_LINE}",  # user edits this
        "Thought: Done.\nAction: submit",
    ]
    session, log = logged_session(repo, tmp_path, outputs, "text")
    closing(session)
    session.start()
    session.propose()
    session.decide(Approve())
    session.propose()
    session.decide(Reject("never delete tests"))
    assert session.propose() is None
    session.propose()
    session.decide(Approve())
    session.run_user_command("touch NOTES.txt")
    session.add_user_message("keep the README as it is")
    session.propose()
    session.decide(Approve())
    session.add_user_message("this one is undone with its step")
    session.undo()
    assert "broken" not in (repo / "README.md").read_text()
    session.propose()
    fix = StrReplaceEditor(command="str_replace", path="calc/ops.py", old_str=BUGGY_LINE,
                           new_str=FIXED_LINE)
    session.decide(EditAction(fix))
    session.propose()
    session.decide(Approve())
    assert session.finished.reason == "submitted"
    return session, log


def test_replay_export_keeps_only_what_ran_and_stayed(git_repo, tmp_path, closing):
    session, log = decided_session(git_repo, tmp_path, closing)
    rows = export(read_trajectory(log), "replay", git_repo)
    steps = [formats.parse(r["output"], "text").action for r in rows]
    assert [a.kind for a in steps] == ["bash", "read", "bash", "edit", "submit"]
    assert steps[2] == Bash("touch NOTES.txt")  # the user's command, replayed as a bash turn
    # The user's str_replace, in the text dialect's only edit form.
    edit = steps[3]
    assert isinstance(edit, Edit) and (edit.path, edit.start, edit.end) == ("calc/ops.py", 7, 7)
    assert edit.content.rstrip("\n") == FIXED_LINE
    text = to_jsonl(rows)
    assert "rm -rf tests" not in text and "broken" not in text and GARBAGE not in text
    assert "README" not in text  # messages are not model turns

    fresh, patch = rerun(rows, "text", tmp_path, closing)
    assert patch == session.finished.patch
    assert (fresh / "NOTES.txt").exists() and repo_tests_pass(fresh)


def test_sft_toolcall_export_is_the_toolcall_training_shape(git_repo, tmp_path, closing):
    session, log = decided_session(git_repo, tmp_path, closing)
    [row] = export(read_trajectory(log), "sft-toolcall", git_repo)
    assert row["tools"] == prompts.TOOLS
    messages = row["messages"]
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert messages[0]["content"] == prompts.TOOLCALL_SYSTEM
    assert messages[1]["content"].startswith("<uploaded_files>\n/testbed\n</uploaded_files>\n")
    assert f"<pr_description>\n{session.issue}\n</pr_description>" in messages[1]["content"]
    assistant = [m["content"] for m in messages if m["role"] == "assistant"]
    # Every assistant turn is a toolcall reply the toolcall parser reads back.
    actions = [formats.parse(a, "toolcall").action for a in assistant]
    assert [a.kind for a in actions] == ["bash", "bash", "str_replace_editor",
                                         "str_replace_editor", "submit"]
    assert actions[2] == StrReplaceEditor(command="view", path="calc/ops.py")
    # The user's edit replaced the model's (wrong) one.
    assert actions[3].new_str == FIXED_LINE
    assert actions[3].old_str == BUGGY_LINE
    assert all("Thought:" not in a for a in assistant)
    text = json.dumps(row)
    # The rejected proposal stays in the context the later turns answered, weighted 0.
    weights = [m.get("weight", 1) for m in messages if m["role"] == "assistant"]
    assert weights == [1, 0, 1, 1, 1] and "rm -rf tests" in assistant[1]
    rejection = messages[messages.index(next(m for m in messages if m.get("weight") == 0)) + 1]
    assert rejection["role"] == "tool" and "never delete tests" in rejection["content"]
    # The user's own command is a user note between tool results.
    notes = [m for m in messages if m["role"] == "user" and "touch NOTES.txt" in m["content"]]
    assert len(notes) == 1
    said = [i for i, m in enumerate(messages) if "keep the README as it is" in m["content"]]
    assert len(said) == 1 and messages[said[0]]["role"] == "user"
    assert messages.index(notes[0]) < said[0] < len(messages) - 1
    assert "undone with its step" not in text
    tools = [m for m in messages if m["role"] == "tool"]
    assert len(tools) == len(assistant)


def test_sft_toolcall_from_a_line_edit_reads_the_file_before_the_step(git_repo, tmp_path, closing):
    session, log = logged_session(git_repo, tmp_path, FIX_SCRIPTS["text"], "text")
    closing(session)
    session.run(AutoPolicy())
    [row] = export(read_trajectory(log), "sft-toolcall", git_repo)
    calls = [formats.parse(m["content"], "toolcall").action
             for m in row["messages"] if m["role"] == "assistant"]
    edit = next(c for c in calls if getattr(c, "command", None) == "str_replace")
    assert edit.old_str.strip() == BUGGY_LINE.strip() and edit.new_str.strip() == FIXED_LINE.strip()
    with pytest.raises(ExportError, match="no toolcall form|pass --repo"):
        export(read_trajectory(log), "sft-toolcall", None)


def test_sft_text_rows_are_prompt_completion_prefixes(git_repo, tmp_path, closing):
    session, log = logged_session(git_repo, tmp_path, FIX_SCRIPTS["text"], "text")
    closing(session)
    session.run(AutoPolicy())
    rows = export_sft_text(read_trajectory(log), git_repo)
    assert len(rows) == len(FIX_SCRIPTS["text"])
    for row, nxt in zip(rows, rows[1:]):
        assert nxt["prompt"].startswith(row["prompt"] + row["completion"])
    assert rows[0]["prompt"] == prompts.text_prompt(session.issue, [])
    assert rows[0]["prompt"].endswith("## Your turn:\nThought:")
    for row, raw in zip(rows, FIX_SCRIPTS["text"]):
        assert row["completion"] == " " + raw.removeprefix("Thought:").strip()
        formats.parse("Thought:" + row["completion"], "text")
    last_output = session.records[-2].observation.output.strip()
    assert f"Observation:\n{last_output}" in rows[-1]["prompt"]


def test_sft_text_keeps_a_rejection_in_the_context_of_the_turns_after_it(
    git_repo, tmp_path, closing
):
    """The model's reply to a rejection answered it: the rejection is in that reply's prompt."""
    session, log = decided_session(git_repo, tmp_path, closing)
    rows = export_sft_text(read_trajectory(log), git_repo)
    assert not any("rm -rf tests" in row["completion"] for row in rows)
    after = next(row for row in rows if "read calc/ops.py" in row["completion"])
    assert "rm -rf tests" in after["prompt"] and "never delete tests" in after["prompt"]
    assert "rm -rf tests" not in rows[0]["prompt"]


def test_sft_exports_use_the_sessions_prompt_profile(git_repo, tmp_path, closing):
    session, log = logged_session(git_repo, tmp_path, FIX_SCRIPTS["toolcall"], "toolcall",
                                  prompt_profile="card")
    closing(session)
    session.run(AutoPolicy())
    [row] = export(read_trajectory(log), "sft-toolcall", git_repo)
    card = prompts.profile_for("toolcall", "card")
    assert row["messages"][0]["content"] == card.render("system_template", "toolcall")
    assert row["messages"][1]["content"] == session.issue
    tools = [m["content"] for m in row["messages"] if m["role"] == "tool"]
    assert tools and not any(t.startswith("OBSERVATION:") for t in tools)  # card: no envelope


def test_swebench_export_and_cli(git_repo, tmp_path, closing, capsys):
    session, log = logged_session(git_repo, tmp_path, FIX_SCRIPTS["xml"], "xml",
                                  backend_info={"backend": "replay", "model": "tiny-model"})
    closing(session)
    finished = session.run(AutoPolicy())

    import argparse

    parser = argparse.ArgumentParser()
    add_export_args(parser)
    out = tmp_path / "preds.jsonl"
    args = parser.parse_args([session.id[:12], "--format", "swebench", "--repo", str(git_repo),
                              "-o", str(out)])
    assert export_main(args) == 0
    [prediction] = [json.loads(line) for line in out.read_text().splitlines()]
    assert prediction == {"instance_id": session.id, "model_name_or_path": "tiny-model",
                          "model_patch": finished.patch}

    args = parser.parse_args(["nope", "--format", "replay", "--repo", str(git_repo)])
    assert export_main(args) == 1
    assert "navtui sessions" in capsys.readouterr().err


def test_swebench_patch_of_an_unfinished_session_comes_from_its_checkpoints(git_repo, tmp_path,
                                                                           closing):
    outputs = FIX_SCRIPTS["text"][:3]  # no tests run, no submit: the script runs out
    session, log = logged_session(git_repo, tmp_path, outputs, "text")
    closing(session)
    session.start()
    for _ in outputs:
        session.propose()
        session.decide(Approve())
    shutil.copy(log, tmp_path / "crashed.jsonl")  # as if killed before SessionFinished
    trajectory = read_trajectory(tmp_path / "crashed.jsonl")
    assert trajectory.finished is None
    [prediction] = export(trajectory, "swebench", git_repo)
    assert f"+{FIXED_LINE}" in prediction["model_patch"]
    assert prediction["model_patch"].strip() == session.workspace.patch().strip()
    with pytest.raises(ExportError, match="--repo"):
        export(trajectory, "swebench", None)
    git(git_repo, "status")  # the repository is intact


def test_unknown_format_is_refused(git_repo, tmp_path):
    log = tmp_path / "s.jsonl"
    writer = TrajectoryWriter(log)
    writer.meta(note="no session here")
    writer.close()
    with pytest.raises(ExportError, match="choose one of"):
        export(read_trajectory(log), "csv")


def test_a_translated_action_gets_the_translated_tools_output(git_repo, tmp_path, closing):
    """A text session shown to the toolcall model: its `read` is a `view` and its line `edit`
    a `str_replace`, so their results are what those tools print, not `read`'s and `edit`'s."""
    session, log = logged_session(git_repo, tmp_path, FIX_SCRIPTS["text"], "text")
    closing(session)
    session.run(AutoPolicy())
    assert any(r.observation.output.startswith("Edited ") for r in session.records)
    [row] = export(read_trajectory(log), "sft-toolcall", git_repo)
    messages = row["messages"]
    results = {}
    for call, result in zip(messages, messages[1:]):
        if call["role"] == "assistant":
            action = formats.parse(call["content"], "toolcall").action
            results[getattr(action, "command", action.kind)] = result["content"]
    assert "Here's the result of running `cat -n` on /testbed/calc/ops.py" in results["view"]
    assert "Edited " not in results["str_replace"]
    assert "The file /testbed/calc/ops.py has been edited." in results["str_replace"]
    assert "return sum(values) / len(values)" in results["str_replace"]
