"""Who decides on a proposal: the front end (ask) or nobody (auto); and which proposals the
user's always-allow rules pass without asking.

`Approvals` is the one answer to "is this approved without asking, and why": every front end
(the TUI's driver, `--plain`, `--auto`, batch) asks it, so auto mode, the config's `[rules]` and
the rules added during a session mean the same everywhere.

Command-prefix rules are matched on parsed shell syntax, never on raw text: a command is split at
`;`, `&&`, `||`, `|`, `&` and newlines into simple commands, and *every* one of them must start
with an allowed prefix (whole words). Anything whose effect cannot be read off its words —
command substitution, redirections, subshells, unbalanced quotes — never matches. So
`git status && rm -rf x` does not match `git status`, and neither does `git status > x`.

Deny rules go the other way: a command is denied when *any* of its simple commands starts with
a denied prefix (`ls && rm -rf x` is denied by `rm -rf`); a command whose syntax cannot be
judged is never denied by a rule, it is asked about as before.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from typing import Protocol

from agent_core.actions import Action, Bash, StrReplaceEditor
from agent_core.events import StepProposed
from agent_core.steps import AUTO, RULE, Approve, Decision, Reject

SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;"})
# Text that makes a command's effect depend on more than its words.
UNSAFE_TEXT = ("`", "$(", "<(", ">(")


class Policy(Protocol):
    """Decides on one proposal; the session enforces limits, not the policy."""

    def decide(self, proposal: StepProposed) -> Decision: ...


class AutoPolicy:
    """Approve everything (the session's step/time limits still apply)."""

    def decide(self, proposal: StepProposed) -> Decision:
        return Approve(AUTO)


class AskPolicy:
    """Decide what `approvals` decides without asking (telling `announce` what and why); hand
    every other proposal to a front end (a stdin prompt) and return its answer."""

    def __init__(self, ask: Callable[[StepProposed], Decision],
                 approvals: Approvals | None = None,
                 announce: Callable[[StepProposed, Decision, str], None] | None = None) -> None:
        self.ask = ask
        self.approvals = approvals or Approvals()
        self.announce = announce

    def decide(self, proposal: StepProposed) -> Decision:
        decided = self.approvals.decision(proposal)
        if decided is None:
            return self.ask(proposal)
        decision, reason = decided
        if self.announce is not None:
            self.announce(proposal, decision, reason)
        return decision


def split_simple_commands(command: str) -> list[list[str]] | None:
    """Words of each simple command in `command`, or None when it uses syntax we refuse to judge."""
    if any(text in command for text in UNSAFE_TEXT):
        return None
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in SEPARATORS:
            commands.append([])
        elif token and set(token) <= set("();<>|&"):
            return None
        else:
            commands[-1].append(token)
    return [words for words in commands if words]


def command_matches_prefix(command: str, prefix: str) -> bool:
    """True when every simple command in `command` starts with the words of `prefix`."""
    return command_matches_any(command, [prefix])


def command_matches_any(command: str, prefixes: list[str]) -> bool:
    """True when every simple command in `command` starts with one of `prefixes` (whole words)."""
    commands = split_simple_commands(command)
    wanted = [shlex.split(prefix) for prefix in prefixes if prefix.strip()]
    if not commands or not wanted:
        return False
    return all(any(words[: len(p)] == p for p in wanted) for words in commands)


def command_touches_any(command: str, prefixes: list[str]) -> bool:
    """True when some simple command in `command` starts with one of `prefixes` (a deny rule)."""
    commands = split_simple_commands(command) or []
    wanted = [shlex.split(prefix) for prefix in prefixes if prefix.strip()]
    return any(words[: len(p)] == p for p in wanted for words in commands)


def rule_kind(action: Action) -> str:
    """The kind a rule names `action` by: its kind, or `view` for the editor's view command."""
    return "view" if isinstance(action, StrReplaceEditor) and action.command == "view" else action.kind


class RulesPolicy:
    """Which proposals are approved, or rejected, without asking: by action kind or by command
    prefix (a deny rule wins over an allow rule).

    Kinds are action kinds (`read`, `search`, `bash`, `edit`, `str_replace_editor`, `submit`) plus
    `view` for the editor's read-only view command.
    """

    def __init__(self, allow_kinds: set[str], allow_prefixes: list[str],
                 deny_kinds: set[str] | None = None, deny_prefixes: list[str] | None = None) -> None:
        self.allow_kinds = set(allow_kinds)
        self.allow_prefixes = list(allow_prefixes)
        self.deny_kinds = set(deny_kinds or ())
        self.deny_prefixes = list(deny_prefixes or ())

    @property
    def count(self) -> int:
        """How many rules there are."""
        return sum(map(len, (self.allow_kinds, self.allow_prefixes, self.deny_kinds, self.deny_prefixes)))

    def deny_kind(self, kind: str) -> None:
        self.deny_kinds.add(kind)

    def deny_prefix(self, prefix: str) -> None:
        if prefix.strip() and prefix not in self.deny_prefixes:
            self.deny_prefixes.append(prefix)

    def denies(self, proposal: StepProposed) -> bool:
        action = proposal.step.action
        if rule_kind(action) in self.deny_kinds:
            return True
        return isinstance(action, Bash) and command_touches_any(action.command, self.deny_prefixes)

    def allow_kind(self, kind: str) -> None:
        self.allow_kinds.add(kind)

    def allow_prefix(self, prefix: str) -> None:
        if prefix.strip() and prefix not in self.allow_prefixes:
            self.allow_prefixes.append(prefix)

    def allows(self, proposal: StepProposed) -> bool:
        action = proposal.step.action
        if self.denies(proposal):
            return False
        if action.kind in self.allow_kinds:
            return True
        if isinstance(action, StrReplaceEditor) and action.command == "view":
            return "view" in self.allow_kinds
        if isinstance(action, Bash):
            return command_matches_any(action.command, self.allow_prefixes)
        return False


class Approvals:
    """What is decided without asking, and why: a deny rule's rejection (in auto mode too), then
    auto mode, then the always-allow rules (the config's `[rules]` and those the user adds
    during the session)."""

    def __init__(self, *, auto: bool = False, allow_kinds: Iterable[str] = (),
                 allow_prefixes: Iterable[str] = (), deny_kinds: Iterable[str] = (),
                 deny_prefixes: Iterable[str] = ()) -> None:
        self.auto = auto
        self.rules = RulesPolicy(set(allow_kinds), [], set(deny_kinds), [])
        for prefix in allow_prefixes:
            self.rules.allow_prefix(prefix)
        for prefix in deny_prefixes:
            self.rules.deny_prefix(prefix)

    @property
    def rule_count(self) -> int:
        return self.rules.count

    def decision(self, proposal: StepProposed) -> tuple[Decision, str] | None:
        """The decision on `proposal` made without asking and why ("a deny rule", "auto mode",
        "an always-allow rule"), its `decided_by` RULE or AUTO; None when the user decides."""
        if self.rules.denies(proposal):
            return Reject(decided_by=RULE), "a deny rule"
        if self.auto:
            return Approve(AUTO), "auto mode"
        if self.rules.allows(proposal):
            return Approve(RULE), "an always-allow rule"
        return None

    def label(self) -> str:
        """How a status line shows the policy: `auto`, `ask` or `ask (+N rules)`."""
        if self.auto:
            return "auto"
        return f"ask (+{self.rule_count} rules)" if self.rule_count else "ask"
