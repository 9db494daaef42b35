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
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from typing import Protocol

from agent_core.actions import Bash, StrReplaceEditor
from agent_core.events import StepProposed
from agent_core.steps import Approve, Decision

SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;"})
# Text that makes a command's effect depend on more than its words.
UNSAFE_TEXT = ("`", "$(", "<(", ">(")


class Policy(Protocol):
    """Decides on one proposal; the session enforces limits, not the policy."""

    def decide(self, proposal: StepProposed) -> Decision: ...


class AutoPolicy:
    """Approve everything (the session's step/time limits still apply)."""

    def decide(self, proposal: StepProposed) -> Decision:
        return Approve()


class AskPolicy:
    """Approve what `approvals` passes (telling `announce` why); hand every other proposal to a
    front end (a stdin prompt) and return its answer."""

    def __init__(self, ask: Callable[[StepProposed], Decision],
                 approvals: Approvals | None = None,
                 announce: Callable[[StepProposed, str], None] | None = None) -> None:
        self.ask = ask
        self.approvals = approvals or Approvals()
        self.announce = announce

    def decide(self, proposal: StepProposed) -> Decision:
        reason = self.approvals.reason(proposal)
        if reason is None:
            return self.ask(proposal)
        if self.announce is not None:
            self.announce(proposal, reason)
        return Approve()


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


class RulesPolicy:
    """Which proposals are approved without asking: by action kind or by command prefix.

    Kinds are action kinds (`read`, `search`, `bash`, `edit`, `str_replace_editor`, `submit`) plus
    `view` for the editor's read-only view command.
    """

    def __init__(self, allow_kinds: set[str], allow_prefixes: list[str]) -> None:
        self.allow_kinds = set(allow_kinds)
        self.allow_prefixes = list(allow_prefixes)

    def allow_kind(self, kind: str) -> None:
        self.allow_kinds.add(kind)

    def allow_prefix(self, prefix: str) -> None:
        if prefix.strip() and prefix not in self.allow_prefixes:
            self.allow_prefixes.append(prefix)

    def allows(self, proposal: StepProposed) -> bool:
        action = proposal.step.action
        if action.kind in self.allow_kinds:
            return True
        if isinstance(action, StrReplaceEditor) and action.command == "view":
            return "view" in self.allow_kinds
        if isinstance(action, Bash):
            return command_matches_any(action.command, self.allow_prefixes)
        return False


class Approvals:
    """What is approved without asking, and why: auto mode, then the always-allow rules (the
    config's `[rules]` and those the user adds during the session)."""

    def __init__(self, *, auto: bool = False, allow_kinds: Iterable[str] = (),
                 allow_prefixes: Iterable[str] = ()) -> None:
        self.auto = auto
        self.rules = RulesPolicy(set(allow_kinds), [])
        for prefix in allow_prefixes:
            self.rules.allow_prefix(prefix)

    @property
    def rule_count(self) -> int:
        return len(self.rules.allow_kinds) + len(self.rules.allow_prefixes)

    def reason(self, proposal: StepProposed) -> str | None:
        """Why `proposal` needs no answer from the user ("auto mode", "an always-allow rule"),
        or None when it does."""
        if self.auto:
            return "auto mode"
        if self.rules.allows(proposal):
            return "an always-allow rule"
        return None

    def label(self) -> str:
        """How a status line shows the policy: `auto`, `ask` or `ask (+N rules)`."""
        if self.auto:
            return "auto"
        return f"ask (+{self.rule_count} rules)" if self.rule_count else "ask"
