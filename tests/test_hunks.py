"""Per-hunk review in the core: an edit split into hunks, exactly the kept ones applied, the
model told what became of each after the tool's usual answer, the review logged and read back."""

from __future__ import annotations

import pytest

from agent_core import prompts
from agent_core.actions import Edit, StrReplaceEditor
from agent_core.event_codec import decision_from_dict, decision_to_dict
from agent_core.events import StepExecuted
from agent_core.executor import Executor
from agent_core.hunks import (
    DROP, HunkChoice, NothingKept, Region, apply_hunks, review_of, split_hunks,
)
from agent_core.stored_turns import stored_turn
from agent_core.steps import Approve, KeepHunks, Verdict
from agent_core.trajectory import TrajectoryWriter, read_trajectory
from tests.fixtures.repos import make_repo
from tests.test_session import make_session, sessions, write_script  # noqa: F401 (a fixture)

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
OLD_BLOCK = "line 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n"
NEW_BLOCK = "line three\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline ten\n"


def xml_replace(old: str, new: str, path: str = "/testbed/notes.txt") -> str:
    return ("Change two lines.\n\n<function=str_replace_editor>\n<parameter=command>str_replace"
            f"</parameter>\n<parameter=path>{path}</parameter>\n<parameter=old_str>\n{old}"
            f"</parameter>\n<parameter=new_str>\n{new}</parameter>\n</function>")


@pytest.fixture
def notes_repo(tmp_path):
    return make_repo(tmp_path / "repo", {"notes.txt": ORIGINAL})


def test_two_separate_changes_are_two_hunks_and_each_can_go():
    region = Region("notes.txt", OLD_BLOCK, NEW_BLOCK, 3)
    first, second = split_hunks(region)
    assert (first.header, first.where) == ("@@ -3,1 +3,1 @@", "line 3")
    assert (second.header, second.where) == ("@@ -10,1 +10,1 @@", "line 10")
    assert first.diff_lines()[:3] == ["@@ -3,1 +3,1 @@", "-line 3", "+line three"]
    assert apply_hunks(region, [first, second], {1: DROP}) == OLD_BLOCK.replace("line 10", "line ten")
    assert apply_hunks(region, [first, second], {2: HunkChoice(text="line TEN")}) == (
        OLD_BLOCK.replace("line 3\n", "line three\n").replace("line 10", "line TEN"))
    assert apply_hunks(region, [first, second], {}) == NEW_BLOCK


def test_a_str_replace_inside_a_line_is_reviewed_in_whole_lines(notes_repo):
    action = StrReplaceEditor("str_replace", "notes.txt", old_str="ne 4\nline 5", new_str="ne four\nline 5")
    review = review_of(Executor(notes_repo).files, action)
    [hunk] = review.hunks
    assert hunk.old == ("line 4\n",) and hunk.new == ("line four\n",) and hunk.old_line == 4
    decision = review.decision({1: HunkChoice(text="line IV\n")})
    assert decision.action.old_str == "line 4\nline 5\n" and decision.action.new_str == "line IV\nline 5\n"


def test_dropping_every_hunk_leaves_nothing_to_run(notes_repo):
    action = StrReplaceEditor("str_replace", "notes.txt", old_str=OLD_BLOCK, new_str=NEW_BLOCK)
    review = review_of(Executor(notes_repo).files, action)
    with pytest.raises(NothingKept):
        review.decision({1: DROP, 2: DROP})
    assert review_of(Executor(notes_repo).files, StrReplaceEditor("str_replace", "notes.txt",
                                                                  old_str="absent", new_str="x")) is None


def test_the_session_runs_only_the_kept_hunks_and_tells_the_model(notes_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [xml_replace(OLD_BLOCK, NEW_BLOCK)])
    session, _, events = sessions(notes_repo, script, "xml")
    log = tmp_path / "log.jsonl"
    session.subscribe(TrajectoryWriter(log))
    proposal = session.propose()
    review = review_of(session.executor.files, proposal.step.action)
    assert [h.number for h in review.hunks] == [1, 2]
    decision = review.decision({1: DROP})
    record = session.decide(decision)

    assert (notes_repo / "notes.txt").read_text() == ORIGINAL.replace("line 10\n", "line ten\n")
    assert [o.verdict for o in record.decision.hunks] == [Verdict.DROPPED, Verdict.KEPT]
    # The tool's usual answer to the action that ran, byte for byte, then the review's note.
    usual = Executor(make_repo(tmp_path / "twin", {"notes.txt": ORIGINAL})).execute(decision.action)
    assert record.observation == usual
    formatted = prompts.format_observation("xml", decision.action, usual, profile=session.profile,
                                           to_model=session.executor.path_map.to_model)
    turn = stored_turn(record)
    assert turn.assistant == proposal.step.raw  # the model's own turn stays its own
    assert turn.observation.startswith(formatted + "\n")
    note = turn.observation[len(formatted):]
    assert "1 of its 2 hunks were applied" in note
    assert "Applied: hunk 2 (line 10)." in note and "Dropped: hunk 1 (line 3)" in note
    assert "/testbed/notes.txt" in note

    [logged] = [e for e in read_trajectory(log).events if isinstance(e, StepExecuted)]
    assert isinstance(logged.record.decision, KeepHunks)
    assert logged.record.decision == record.decision
    assert decision_from_dict(decision_to_dict(decision)) == decision


def test_a_text_dialect_edit_keeps_the_users_version_of_a_hunk(notes_repo, tmp_path, sessions):
    content = NEW_BLOCK.rstrip("\n")
    script = write_script(tmp_path / "s.jsonl", [f"Thought: two lines.\nAction: edit notes.txt 3 10\n{content}"])
    session, _, _ = sessions(notes_repo, script, "text")
    proposal = session.propose()
    assert isinstance(proposal.step.action, Edit)
    review = review_of(session.executor.files, proposal.step.action)
    record = session.decide(review.decision({1: HunkChoice(text="line 3, as the user wants it")}))
    assert (notes_repo / "notes.txt").read_text() == ORIGINAL.replace(
        "line 3\n", "line 3, as the user wants it\n").replace("line 10\n", "line ten\n")
    note = stored_turn(record).observation
    assert "The user changed hunk 1 (line 3) before applying it; it now reads:\nline 3, as the user wants it" in note


def test_a_create_is_one_hunk_the_user_can_rewrite(notes_repo, tmp_path, sessions):
    raw = ("New file.\n\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n"
           "<parameter=path>/testbed/new.txt</parameter>\n<parameter=file_text>\na\nb\n"
           "</parameter>\n</function>")
    session, _, _ = sessions(notes_repo, write_script(tmp_path / "s.jsonl", [raw]), "xml")
    proposal = session.propose()
    review = review_of(session.executor.files, proposal.step.action)
    assert len(review.hunks) == 1
    session.decide(review.decision({1: HunkChoice(text="a\nB\n")}))
    assert (notes_repo / "new.txt").read_text() == "a\nB\n"


def test_a_plain_approve_is_not_a_hunk_review(notes_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [xml_replace(OLD_BLOCK, NEW_BLOCK)])
    session, _, _ = sessions(notes_repo, script, "xml")
    session.propose()
    record = session.decide(Approve())
    assert "hunk" not in stored_turn(record).observation
    assert (notes_repo / "notes.txt").read_text() == ORIGINAL.replace(OLD_BLOCK, NEW_BLOCK)


def test_hunk_reviews_become_dpo_and_kto_rows_and_finetune_rows(notes_repo, tmp_path, sessions):
    """chosen: the model's turn proposing only the kept hunks; rejected: its full proposal."""
    from agent_core.exports import export
    from agent_core.learn.history import model_turns
    from agent_core.learn.rows import Renderer, build_rows

    content = NEW_BLOCK.rstrip("\n")
    raw = f"Thought: two lines.\nAction: edit notes.txt 3 10\n{content}"
    session, _, _ = sessions(notes_repo, write_script(tmp_path / "s.jsonl", [raw]), "text")
    log = tmp_path / "log.jsonl"
    session.subscribe(TrajectoryWriter(log))
    review = review_of(session.executor.files, session.propose().step.action)
    session.decide(review.decision({1: DROP}))
    trajectory = read_trajectory(log)

    [pair] = export(trajectory, "dpo")
    assert pair["rejected"] == " " + raw.removeprefix("Thought: ") + "\n\nObservation:"
    kept = content.replace("line three", "line 3")
    assert pair["chosen"] == " two lines.\nAction: edit notes.txt 3 10\n" + kept + "\n\nObservation:"
    kto = export(trajectory, "kto")
    assert [(row["completion"], row["label"]) for row in kto] == [
        (pair["rejected"], False), (pair["chosen"], True)]
    # `navtui finetune` builds its rows the same way, from the same turns.
    rows = build_rows("dpo", model_turns(trajectory), Renderer(None))
    assert rows.data == [pair]


def test_a_hunk_review_resumes_with_the_note_the_model_read(notes_repo, tmp_path):
    """The logged review comes back on resume: the same record, the same next prompt."""
    from tests.test_resume import logged, resumed

    script = write_script(tmp_path / "s.jsonl", [
        f"Thought: two lines.\nAction: edit notes.txt 3 10\n{NEW_BLOCK.rstrip()}",
        "Thought: look.\nAction: bash true"])
    original, original_backend, log = logged(notes_repo, script)
    try:
        review = review_of(original.executor.files, original.propose().step.action)
        original.decide(review.decision({2: DROP}))
        again, again_backend, _ = resumed(notes_repo, log, script)
        try:
            assert again.records == original.records
            original.propose()
            again.propose()
            assert again_backend.prompts[-1] == original_backend.prompts[-1]
            assert "Dropped: hunk 2 (line 10)" in again_backend.prompts[-1].text
        finally:
            again.close()
    finally:
        original.close()
