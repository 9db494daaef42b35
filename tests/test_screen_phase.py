"""The main screen's phase (header word, card colour) follows its state, first match wins."""

from agent_core.actions import Bash
from agent_core.events import SessionFinished, StepProposed
from agent_core.finish import FinishReason
from agent_core.steps import ProposedStep
from app.screens.phase import Phase

PROPOSAL = StepProposed(1, ProposedStep("look", Bash("ls"), "raw", "r2e"), "ls")
IDLE = dict(finished=None, pending=None, running=False, generating=False, paused=False)


def test_the_finish_outranks_everything_and_names_its_reason():
    state = dict(IDLE, finished=SessionFinished(FinishReason.LIMIT, "max steps"), pending=PROPOSAL,
                 running=True, generating=True, paused=True)
    assert Phase.of(**state) == Phase("finished: limit", "done")


def test_a_waiting_proposal_outranks_a_running_command():
    # (the user's own command runs beside a proposal, which stays pending)
    assert Phase.of(**dict(IDLE, pending=PROPOSAL, running=True)) == Phase("waiting for you", "pending")


def test_running_thinking_stopped_and_working_in_that_order():
    assert Phase.of(**dict(IDLE, running=True, generating=True)) == Phase("running", "running")
    assert Phase.of(**dict(IDLE, generating=True, paused=True)) == Phase("thinking", "thinking")
    assert Phase.of(**dict(IDLE, paused=True)) == Phase("stopped", "idle")
    assert Phase.of(**IDLE) == Phase("working", "idle")
