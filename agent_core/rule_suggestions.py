"""Approval rules suggested from the user's own decisions in the session logs.

Only a person's decisions count (`decided_by` "user": not auto mode, not a rule, not the
decisions of logs too old to say who decided). A bash command prefix or an action kind the
user approved every time, at least `min_count` times, becomes an allow suggestion; one the user
rejected every time becomes a deny suggestion. An edit counts against both: the user neither
took nor refused the proposal as it was.

Prefixes come from parsed shell syntax (`agent_core.policy.split_simple_commands`), one simple
command at a time, so a suggestion never spans `&&`, `;` or `|`; a command whose syntax cannot
be judged (substitutions, redirections) is left out altogether. A prefix's evidence is every
decision on a command with a part that starts with it, so a rejected `pytest -x && rm -rf x`
keeps `pytest -x` from being suggested. Among prefixes with the same evidence the longest is
offered (the most specific rule the decisions support), and a suggestion whose evidence lies
within a wider one's is not offered on its own. A prefix is never shorter than the one the
always-allow dialog offers (one word, two for tools like `git` and `python`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.actions import Bash
from agent_core.policy import RulesPolicy, command_matches_any, rule_kind, split_simple_commands
from agent_core.steps import USER, Approve, Origin, Reject, StepRecord
from agent_core.trajectory import TrajectoryError, record_from_dict, repo_state_dir, sessions_dir

DEFAULT_MIN_COUNT = 5
# Commands whose first word alone says little: a prefix has at least two words for these.
TWO_WORD_TOOLS = frozenset({"git", "python", "python3", "pip", "npm", "uv", "cargo", "go", "make"})
ALLOW, DENY = "allow", "deny"
# How the log's lines of executed and rejected steps begin (`TrajectoryWriter`'s JSON).
RECORD_LINES = ('{"type": "StepExecuted"', '{"type": "StepRejected"')
APPROVED, REJECTED, EDITED = "approved", "rejected", "edited"


@dataclass(frozen=True)
class Decided:
    """One decision a person made on a proposal: where it is logged and what it was."""

    session: str
    index: int
    text: str  # the command, or the action's kind and path
    verdict: str  # APPROVED, REJECTED or EDITED
    parts: tuple[tuple[str, ...], ...] = ()  # a command's simple commands (none: not bash)
    kind: str = ""  # the rule kind of a non-bash action


@dataclass(frozen=True)
class Suggestion:
    """A rule the decisions support: `rule` ALLOW or DENY, of a bash `prefix` or an action
    `kind`, with every decision that bears on it."""

    rule: str
    evidence: tuple[Decided, ...]
    prefix: str = ""
    kind: str = ""

    @property
    def key(self) -> str:
        """How a declined suggestion is remembered: `allow prefix git status`."""
        return f"{self.rule} {'prefix ' + self.prefix if self.prefix else 'kind ' + self.kind}"

    def question(self) -> str:
        """`you approved `pytest -x …` 14 of 14 times: always allow this prefix?`"""
        verb = "approved" if self.rule == ALLOW else "rejected"
        count = len(self.evidence)
        if self.prefix:
            return (f"you {verb} `{self.prefix} …` {count} of {count} times: "
                    f"always {self.rule} this prefix?")
        return f"you {verb} every {self.kind} action, {count} of {count} times: always {self.rule} them?"


def _parts(command: str) -> tuple[tuple[str, ...], ...] | None:
    commands = split_simple_commands(command)
    return None if not commands else tuple(tuple(words) for words in commands)


def decided_steps(records: Iterable[StepRecord], session: str) -> Iterator[Decided]:
    """The proposals in `records` a person decided on (see the module docstring)."""
    for record in records:
        decision = record.decision
        if record.origin is Origin.USER or record.user_edits is not None:
            continue
        if isinstance(decision, Approve | Reject) and decision.decided_by != USER:
            continue
        verdict = (APPROVED if isinstance(decision, Approve)
                   else REJECTED if isinstance(decision, Reject) else EDITED)
        action = record.proposed.action
        if isinstance(action, Bash):
            parts = _parts(action.command)
            if parts is not None:
                yield Decided(session, record.index, action.command, verdict, parts)
        else:
            kind = rule_kind(action)
            text = " ".join(filter(None, (kind, str(getattr(action, "path", "") or ""))))
            yield Decided(session, record.index, text, verdict, kind=kind)


def logged_records(path: Path) -> list[StepRecord]:
    """The executed and rejected step records of the log at `path`, undone ones included (only
    those lines are decoded: a log is mostly turns and outputs); a torn line is skipped."""
    records: list[StepRecord] = []
    with path.open(encoding="utf-8", errors="surrogateescape") as lines:
        for line in lines:
            if not line.startswith(RECORD_LINES):
                continue
            try:
                records.append(record_from_dict(json.loads(line)["record"]))
            except (ValueError, KeyError, TypeError):
                continue
    return records


def logged_decisions(repos: Iterable[Path]) -> list[Decided]:
    """Every decision a person made in the sessions logged for `repos` (logs that cannot be read
    are skipped), undone steps included: the user decided on them all the same."""
    found: list[Decided] = []
    for repo in repos:
        try:
            folder = sessions_dir(repo_state_dir(repo))
        except TrajectoryError:
            continue
        for path in sorted(folder.glob("*.jsonl")):
            try:
                found += decided_steps(logged_records(path), path.stem)
            except OSError:
                continue
    return found


def _shortest(words: tuple[str, ...]) -> int:
    return 2 if words[0] in TWO_WORD_TOOLS and len(words) > 1 else 1


def _prefix_evidence(decided: list[Decided]) -> dict[tuple[str, ...], list[Decided]]:
    """Each candidate prefix (word tuple) and the decisions on commands with a part starting
    with it."""
    evidence: dict[tuple[str, ...], list[Decided]] = {}
    for step in decided:
        seen: set[tuple[str, ...]] = set()
        for words in step.parts:
            for length in range(_shortest(words), len(words) + 1):
                seen.add(words[:length])
        for prefix in seen:
            evidence.setdefault(prefix, []).append(step)
    return evidence


@dataclass
class _Candidates:
    rule: str
    verdict: str
    min_count: int
    found: list[Suggestion] = field(default_factory=list)

    def add(self, evidence: list[Decided], **rule: str) -> None:
        if len(evidence) >= self.min_count and all(step.verdict == self.verdict for step in evidence):
            self.found.append(Suggestion(self.rule, tuple(evidence), **rule))

    def widest(self) -> list[Suggestion]:
        """The suggestions left when, among prefixes that extend one another, a prefix with a
        longer one of the same evidence goes (the longer is as supported and more specific),
        and so does one whose evidence lies within a shorter one's."""
        facts = [(s, tuple(shlex.split(s.prefix)), frozenset(s.evidence)) for s in self.found]

        def beaten(a: tuple[str, ...], evidence: frozenset[Decided]) -> bool:
            for _, b, others in facts:
                if not a or not b or a == b:
                    continue
                if len(b) > len(a) and b[: len(a)] == a and others == evidence:
                    return True
                if len(b) < len(a) and a[: len(b)] == b and evidence < others:
                    return True
            return False

        kept = [s for s, words, evidence in facts if not beaten(words, evidence)]
        return sorted(kept, key=lambda s: (-len(s.evidence), s.prefix or s.kind))


def suggest_rules(
    decided: list[Decided], *, min_count: int = DEFAULT_MIN_COUNT,
    rules: RulesPolicy | None = None, declined: Iterable[str] = (),
) -> list[Suggestion]:
    """Allow suggestions, then deny suggestions, most evidence first; none that `rules` already
    has (an allowed prefix covering it, the same deny prefix or kind) or that was `declined`."""
    rules = rules or RulesPolicy(set(), [])
    skip = set(declined)
    out: list[Suggestion] = []
    prefixes = _prefix_evidence(decided)
    kinds: dict[str, list[Decided]] = {}
    for step in decided:
        if step.kind:
            kinds.setdefault(step.kind, []).append(step)
    for rule, verdict in ((ALLOW, APPROVED), (DENY, REJECTED)):
        candidates = _Candidates(rule, verdict, min_count)
        for words, evidence in prefixes.items():
            candidates.add(evidence, prefix=shlex.join(words))
        for kind, evidence in kinds.items():
            candidates.add(evidence, kind=kind)
        out += [s for s in candidates.widest() if s.key not in skip and not _covered(s, rules)]
    return out


def _covered(suggestion: Suggestion, rules: RulesPolicy) -> bool:
    if suggestion.rule == ALLOW:
        if suggestion.kind:
            return suggestion.kind in rules.allow_kinds
        return command_matches_any(suggestion.prefix, rules.allow_prefixes)
    if suggestion.kind:
        return suggestion.kind in rules.deny_kinds
    return suggestion.prefix in rules.deny_prefixes
