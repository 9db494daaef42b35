"""The main screen's phase: one word for the header and one colour for the action card."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.events import SessionFinished, StepProposed


@dataclass(frozen=True)
class Phase:
    state: str  # the header's state word
    colour: str  # the action card's colour (its `state`)

    @classmethod
    def of(
        cls,
        *,
        finished: SessionFinished | None,
        pending: StepProposed | None,
        running: bool,
        generating: bool,
        paused: bool,
    ) -> Phase:
        """The phase the screen state is in; the first that holds wins."""
        if finished is not None:
            return cls(f"finished: {finished.reason}", "done")
        if pending is not None:
            return cls("waiting for you", "pending")
        if running:
            return cls("running", "running")
        if generating:
            return cls("thinking", "thinking")
        if paused:
            return cls("stopped", "idle")
        return cls("working", "idle")
