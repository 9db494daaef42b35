"""Per-hunk review of a step that ran: its diff's hunks, the dropped ones put back as a
checkpoint of the user's own (undoable), the model told which."""

from __future__ import annotations

import pytest

from agent_core.executor.paths import Confinement
from agent_core.step_hunks import RevertError, revert_hunks, revert_in_session, step_hunks
from agent_core.steps import Approve, StepStatus
from tests.fixtures.repos import make_repo
from tests.test_session import sessions, write_script  # noqa: F401 (a fixture)

ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
CHANGED = ORIGINAL.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\nline 15b\n")
COMMAND = ("sed -i -e 's/^line 3$/line three/' -e 's/^line 15$/line fifteen\\nline 15b/' notes.txt"
           " && printf 'a\\nb\\n' > new.txt")


@pytest.fixture
def notes_repo(tmp_path):
    return make_repo(tmp_path / "repo", {"notes.txt": ORIGINAL})


def ran_step(notes_repo, tmp_path, sessions):
    script = write_script(tmp_path / "s.jsonl", [f"Thought: edit\nAction: bash {COMMAND}",
                                                 "Thought: look\nAction: bash true",
                                                 "Thought: again\nAction: bash true"])
    session, recorder, _ = sessions(notes_repo, script, "text")
    session.propose()
    record = session.decide(Approve())
    assert (notes_repo / "notes.txt").read_text() == CHANGED
    session.propose()  # the next proposal waits while the user reviews the step
    return session, recorder, record


def test_a_steps_diff_is_read_into_hunks_over_its_files(notes_repo, tmp_path, sessions):
    session, _, record = ran_step(notes_repo, tmp_path, sessions)
    hunks = step_hunks(record.diff)
    assert [(h.path, h.hunk.number, h.hunk.where, h.created) for h in hunks] == [
        ("new.txt", 1, "at the start", True), ("notes.txt", 2, "line 3", False),
        ("notes.txt", 3, "line 15", False)]


def test_dropped_hunks_go_back_as_an_undoable_checkpoint_and_the_model_is_told(
        notes_repo, tmp_path, sessions):
    session, recorder, record = ran_step(notes_repo, tmp_path, sessions)
    new_file, first, second = step_hunks(record.diff)
    revert_in_session(session, record.index, [new_file, second], 3)
    assert (notes_repo / "notes.txt").read_text() == ORIGINAL.replace("line 3\n", "line three\n")
    assert not (notes_repo / "new.txt").exists()
    kept = session.records[-1]
    assert kept.status is StepStatus.USER_EDITS and kept.index == 2
    assert sorted(kept.user_edits) == ["new.txt", "notes.txt"]
    assert session.pending.index == 3  # the waiting proposal moved on
    session.decide(Approve())
    session.propose()
    told = recorder.prompts[-1].text
    assert "reviewed the changes of step 1 hunk by hunk and reverted 2 of its 3 hunks" in told
    assert "new.txt at the start; notes.txt line 15" in told
    session.undo(1)  # back to step 1: the revert is undone, the step's work is back
    assert (notes_repo / "notes.txt").read_text() == CHANGED
    assert (notes_repo / "new.txt").read_text() == "a\nb\n"


def test_a_hunk_changed_since_is_refused_and_nothing_is_written(notes_repo, tmp_path, sessions):
    session, _, record = ran_step(notes_repo, tmp_path, sessions)
    _, first, second = step_hunks(record.diff)
    (notes_repo / "notes.txt").write_text(CHANGED.replace("line fifteen", "line 15 again"))
    with pytest.raises(RevertError, match="hunk 3"):
        revert_hunks(Confinement(notes_repo), [first, second])
    assert (notes_repo / "notes.txt").read_text() == CHANGED.replace("line fifteen", "line 15 again")
