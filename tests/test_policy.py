"""Policies: auto, ask, and rules whose command prefixes cannot be widened by shell syntax."""

import pytest

from agent_core.actions import Bash, Edit, Read, Search, StrReplaceEditor, Submit
from agent_core.events import StepProposed
from agent_core.policy import (
    AskPolicy,
    AutoPolicy,
    RulesPolicy,
    command_matches_prefix,
    split_simple_commands,
)
from agent_core.steps import Approve, ProposedStep, Reject


def decide_by_rules(rules: RulesPolicy, fallback, proposed: StepProposed):
    """Approve what the rules allow; ask `fallback` about the rest (as the TUI's driver does)."""
    return Approve() if rules.allows(proposed) else fallback.decide(proposed)


def proposal(action) -> StepProposed:
    step = ProposedStep(thought="", action=action, raw="", dialect="text")
    return StepProposed(index=1, step=step, command_shown=str(action))


@pytest.mark.parametrize(
    "command",
    ["git status", "git status --short", "  git   status  ", "git status; git status", '"git" status'],
)
def test_prefix_matches_plain_uses(command):
    assert command_matches_prefix(command, "git status")


@pytest.mark.parametrize(
    "command",
    [
        "git status && rm -rf x",
        "git status || rm -rf x",
        "git status; rm -rf x",
        "git status;rm -rf x",
        "git status | sh",
        "git status & rm -rf x",
        "git status\nrm -rf x",
        "git status > x",
        "git status 2>&1",
        "git status < /etc/passwd",
        "git status $(rm -rf x)",
        "git status `rm -rf x`",
        "(git status)",
        "git statusx",
        "git",
        'git status "unclosed',
        "rm -rf x; git status",
        "git status # ; rm -rf x",
    ],
)
def test_prefix_never_widened_by_shell_syntax(command):
    assert not command_matches_prefix(command, "git status")


def test_quoted_operators_are_plain_words():
    assert split_simple_commands("grep 'a && b' f.py") == [["grep", "a && b", "f.py"]]
    assert command_matches_prefix("grep 'a && b' f.py", "grep")


def test_empty_prefix_matches_nothing():
    assert not command_matches_prefix("ls", "")
    assert not command_matches_prefix("", "ls")


def test_auto_policy_approves_everything_and_says_it_was_auto_mode():
    assert AutoPolicy().decide(proposal(Bash("rm -rf /tmp/x"))) == Approve(decided_by="auto")


def test_ask_policy_returns_the_front_ends_answer():
    seen = []

    def ask(p):
        seen.append(p)
        return Reject("no")

    p = proposal(Read("a.py"))
    assert AskPolicy(ask).decide(p) == Reject("no")
    assert seen == [p]


def test_rules_allow_kinds_and_ask_the_rest():
    asked = []
    fallback = AskPolicy(lambda p: asked.append(p.step.action) or Reject("asked"))
    rules = RulesPolicy(allow_kinds={"read", "search", "view"}, allow_prefixes=[])
    assert decide_by_rules(rules, fallback, proposal(Read("a.py"))) == Approve()
    assert decide_by_rules(rules, fallback, proposal(Search("x"))) == Approve()
    view = proposal(StrReplaceEditor(command="view", path="a.py"))
    assert decide_by_rules(rules, fallback, view) == Approve()
    for action in (
        StrReplaceEditor(command="create", path="b.py", file_text="x"),
        Edit("a.py", 1, 1, "y"),
        Bash("ls"),
        Submit(),
    ):
        assert decide_by_rules(rules, fallback, proposal(action)) == Reject("asked")
    assert len(asked) == 4


def test_rules_allow_prefix_added_later():
    rules = RulesPolicy(set(), [])
    assert not rules.allows(proposal(Bash("pytest -q tests")))
    rules.allow_prefix("pytest")
    rules.allow_prefix("git status")
    assert rules.allows(proposal(Bash("pytest -q tests")))
    assert rules.allows(proposal(Bash("git status && pytest -x")))
    assert not rules.allows(proposal(Bash("pytest && rm -rf x")))
    assert not rules.allows(proposal(Read("a.py")))
    rules.allow_kind("read")
    assert rules.allows(proposal(Read("a.py")))
