"""How a step's conversation turn is kept in its `StepRecord` (and so in the session log).

The turn is the exact text the model read: its reply and the observation text made from the
step's `Observation`. Both are mostly already in the record (`proposed.raw`, `observation.output`),
so only what differs is stored, under `extra["turn"]`:

* `"assistant"`: the reply text, unless it is `proposed.raw` (then `"assistant_raw": true`);
* `"observation"`: the observation text, unless it contains the command's output verbatim (then
  `"observation_around": [before, after]`, the text around the output).

Logs written before this kept `"assistant"` and `"observation"` in full; they read back the same.
"""

from __future__ import annotations

from typing import Any

from agent_core.prompts import Turn
from agent_core.steps import StepRecord

TURN_KEY = "turn"
# Outputs shorter than this are stored in full: too short to be worth a reference.
MIN_SHARED_OUTPUT = 32


def _output(record: StepRecord) -> str:
    return record.observation.output.rstrip("\n") if record.observation is not None else ""


def store_turn(record: StepRecord, turn: Turn) -> None:
    """Keep `turn` in `record.extra`, without repeating what the record already holds."""
    stored: dict[str, Any] = {}
    if turn.assistant == record.proposed.raw:
        stored["assistant_raw"] = True
    else:
        stored["assistant"] = turn.assistant
    output = _output(record)
    at = turn.observation.find(output) if len(output) >= MIN_SHARED_OUTPUT else -1
    if at >= 0:
        stored["observation_around"] = [turn.observation[:at], turn.observation[at + len(output) :]]
    else:
        stored["observation"] = turn.observation
    record.extra[TURN_KEY] = stored


def stored_turn(record: StepRecord) -> Turn | None:
    """The turn kept by `store_turn` (or by an older navtui); None when the record has none."""
    stored = record.extra.get(TURN_KEY)
    if not isinstance(stored, dict):
        return None
    if stored.get("assistant_raw"):
        assistant = record.proposed.raw
    else:
        assistant = str(stored.get("assistant", ""))
    around = stored.get("observation_around")
    if isinstance(around, list) and len(around) == 2:
        observation = f"{around[0]}{_output(record)}{around[1]}"
    else:
        observation = str(stored.get("observation", ""))
    return Turn(assistant, observation)
