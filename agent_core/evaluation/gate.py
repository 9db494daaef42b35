"""The gate a new adapter passes before it becomes current: not worse than its parent.

On the held-out tasks (none made from a session the adapter trained on: `held_out`), the new
adapter must resolve at least as many as its parent did on the same tasks (`decide`). A tie
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


def decide(new: str, parent: str, paired: Paired | None) -> Verdict:
    """Promote `new` when it resolves at least as many held-out tasks as `parent`."""
    if paired is None or paired.tasks == 0:
        return Verdict(False, f"no held-out task to compare {new} with {parent} on: make some "
                              "with `navtui tasks REPO -o FILE` and pass --gate-tasks FILE")
    solved_parent = paired.both + len(paired.only_a)
    solved_new = paired.both + len(paired.only_b)
    figures = (f"{new} resolves {solved_new}/{paired.tasks} held-out tasks, {parent} "
               f"{solved_parent}/{paired.tasks} (difference {paired.difference:+.1%}, 95% CI "
               f"{paired.ci_low:+.1%} to {paired.ci_high:+.1%}, McNemar p={paired.p_value:.3g})")
    if solved_new >= solved_parent:
        return Verdict(True, f"not worse: {figures}")
    return Verdict(False, f"worse: {figures}")
