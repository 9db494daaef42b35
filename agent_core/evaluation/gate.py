"""The gate a new adapter passes before it becomes current: not worse than its parent.

On the held-out tasks (none made from a session the adapter trained on: `held_out`), the new
adapter must resolve at least as many as its parent did on the same tasks, and where both were
measured on held-out sessions, propose the user's choice at least as often (`decide`). A tie
promotes (the user's newest decisions are in the new one); no held-out task refuses, since
nothing shows the new adapter is not worse.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agent_core.evaluation.stats import Paired
from agent_core.tasks import Task


@dataclass
class Verdict:
    promote: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"decision": "promote" if self.promote else "refuse", **asdict(self)}


def held_out(tasks: list[Task], trained_sessions: list[str]) -> list[Task]:
    """The tasks not made from a session the adapter trained on."""
    trained = set(trained_sessions)
    return [t for t in tasks
            if not (t.source == "session" and t.instance_id.rpartition("__session-")[2] in trained)]


def decide(new: str, parent: str, paired: Paired | None,
           parent_decisions: dict[str, Any] | None = None,
           new_decisions: dict[str, Any] | None = None) -> Verdict:
    """Promote `new` when it resolves at least as many held-out tasks as `parent` and, where
    both were measured on held-out decisions, matches the user's choices at least as often."""
    if paired is None or paired.tasks == 0:
        return Verdict(False, f"no held-out task to compare {new} with {parent} on: make some "
                              "with `navtui tasks REPO -o FILE` and pass --gate-tasks FILE")
    solved_parent = paired.both + len(paired.only_a)
    solved_new = paired.both + len(paired.only_b)
    figures = (f"{new} resolves {solved_new}/{paired.tasks} held-out tasks, {parent} "
               f"{solved_parent}/{paired.tasks} (difference {paired.difference:+.1%}, 95% CI "
               f"{paired.ci_low:+.1%} to {paired.ci_high:+.1%}, McNemar p={paired.p_value:.3g})")
    if solved_new < solved_parent:
        return Verdict(False, f"worse: {figures}")
    was = (parent_decisions or {}).get("match_rate")
    now = (new_decisions or {}).get("match_rate")
    if isinstance(was, float) and isinstance(now, float):
        figures += (f"; it proposes your choice in {now:.0%} of your held-out decisions, "
                    f"{parent} in {was:.0%}")
        if now < was:
            return Verdict(False, f"worse on your decisions: {figures}")
    return Verdict(True, f"not worse: {figures}")
