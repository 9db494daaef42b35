"""One held-out split for every phase of `navtui finetune`: whole sessions, the newest ones.

Rows of one session share their prompts' history (each turn's prompt holds the turns before
it), so a turn held out of training while its neighbours train would be measured on what the
model just learnt. The split is therefore by session, and by time: the newest sessions are
held out (they are what the next sessions will look like). It is made once, on the turns,
before any rows: no held-out turn is a training row in any phase.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from agent_core.learn.history import ModelTurn


class SplitError(Exception):
    """The held-out share cannot be taken from these sessions."""


@dataclass
class Split:
    """The turns to train on and those held out, and which sessions and turns those are."""

    train: list[ModelTurn]
    held_out: list[ModelTurn] = field(default_factory=list)

    @property
    def held_out_sessions(self) -> list[str]:
        return list(dict.fromkeys(turn.session for turn in self.held_out))

    @property
    def held_out_turns(self) -> list[str]:
        return [turn.name for turn in self.held_out]


def split_sessions(sessions: list[str], turns: list[ModelTurn], share: float) -> Split:
    """Hold out the newest `share` of `sessions` (ordered oldest first; at least one when a
    share is asked for, never all of them)."""
    if share <= 0:
        return Split(list(turns))
    with_turns = [s for s in sessions if any(turn.session == s for turn in turns)]
    if len(with_turns) < 2:
        raise SplitError(
            "--holdout holds out whole sessions (the newest ones) and there is only "
            f"{len(with_turns)} session with decided turns: run more sessions, or drop --holdout"
        )
    count = min(max(1, math.floor(len(with_turns) * share)), len(with_turns) - 1)
    held = set(with_turns[-count:])
    return Split([t for t in turns if t.session not in held],
                 [t for t in turns if t.session in held])
