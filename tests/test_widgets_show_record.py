"""The widgets that show a step render it from its record: the timeline's line and word, the
card's ending, the output's title and lines, the step's diff."""

from __future__ import annotations

from agent_core.actions import Bash, Submit
from agent_core.steps import (
    Approve, Checkpoint, EditAction, Observation, Origin, ProposedStep, Reject, StepRecord,
)
from tests.test_widgets import TWO_FILES, Harness
from widgets.action_card import ActionCard
from widgets.diff_view import DiffView
from widgets.output_log import OutputLog
from widgets.step_timeline import StepTimeline

RAN = Observation("a.py\nb.py", exit_code=0)


def record(index: int, proposed=Bash("ls"), **fields) -> StepRecord:
    step = ProposedStep(thought="", action=proposed, raw="", dialect="toolcall")
    fields.setdefault("decision", Approve())
    fields.setdefault("checkpoint", Checkpoint(index, f"refs/x/{index}", "c" * 40, None, None))
    return StepRecord(index=index, proposed=step, **fields)


MODEL = record(1, action=Bash("ls"), observation=RAN, diff=TWO_FILES)
REJECTED = record(2, proposed=Bash("rm -rf ."), decision=Reject("no"), checkpoint=None)
EDITED = record(3, decision=EditAction(Bash("ls -a")), action=Bash("ls -a"), observation=RAN)
COMMAND = record(4, action=Bash("make"), observation=RAN, origin=Origin.USER)
EDITS = record(5, origin=Origin.USER, user_edits=["b.txt", "c.txt"])
REVIEWED = record(6, proposed=Submit(), action=Submit(), observation=RAN, review_stage=0)
SUBMITTED = record(7, proposed=Submit(), action=Submit(), observation=RAN)


async def test_the_timeline_shows_each_kind_of_step_from_its_record():
    timeline = StepTimeline()
    async with Harness(timeline).run_test():
        for shown in (MODEL, REJECTED, EDITED, COMMAND, EDITS, REVIEWED, SUBMITTED):
            timeline.show_record(shown)
        assert [(e.status, e.summary) for e in timeline.entries.values()] == [
            ("executed", "bash ls"),
            ("rejected", "bash rm -rf ."),
            ("executed", "bash ls -a (edited)"),
            ("user", "bash make"),
            ("user", "your edits: b.txt, c.txt"),
            ("executed", "submit the fix"),  # answered with the review: not the end
            ("submitted", "submit the fix"),
        ]


async def test_the_card_ends_a_step_as_its_record_says():
    card = ActionCard()
    async with Harness(card).run_test() as pilot:
        card.show_action("Step 1", Bash("ls"), "ls", None, state="running")
        card.show_record(MODEL)
        await pilot.pause()
        assert card.state == "done" and str(card.query_one("#card-command").render()) == "ls"
        card.show_record(COMMAND)
        assert str(card.query_one("#card-command").render()) == "Your command ran as step 4."
        card.show_record(EDITS)
        assert str(card.query_one("#card-command").render()) == "Your edits are kept as checkpoint 5."
        assert card.state == "done"


async def test_the_output_and_the_diff_show_the_steps_own():
    log, diff = OutputLog(), DiffView()
    async with Harness(log, diff).run_test(size=(100, 40)) as pilot:
        log.show_record(EDITED)
        diff.show_record(MODEL)
        await pilot.pause()
        assert list(log.lines) == ["Step 3 · bash ls -a", "[exit 0]", "a.py", "b.py"]
        assert diff.file_titles == ["calc/ops.py  +1 -1", "notes.txt  +2 -0"]
        log.show_record(REJECTED)
        assert list(log.lines) == ["Step 2 · bash rm -rf .", "(not run)"]
