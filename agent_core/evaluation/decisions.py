"""How an adapter does on the user's own decisions in held-out sessions (a local model only: it
needs the log-probabilities).

For each decided model turn (`agent_core.learn.history`), with the exact prompt the model read:
* `match_rate`: of the turns the user approved or edited, the share where the adapter's own
  reply (generated through the backend, as a session would) proposes the action the user
  approved, or their edit;
* `format_error_rate`: of all those replies, the share that do not parse in the session's
  dialect;
* `wanted_logprob` / `rejected_logprob`: the mean per-token log-probability of what the user
  wanted (the approved reply, or the edit) and of what they rejected, as training's rows write
  them (`agent_core.learn.rows.Renderer`; `agent_core.learn.logprob.mean_logprob`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any

from agent_core.formats import parse
from agent_core.formats.errors import ParseError
from agent_core.learn.history import Label, ModelTurn
from agent_core.learn.logprob import mean_logprob
from agent_core.learn.rows import Renderer
from agent_core.steps import EditAction


@dataclass
class DecisionMetrics:
    turns: int
    match_rate: float | None
    format_error_rate: float | None
    wanted_logprob: float | None
    rejected_logprob: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _share(hits: int, of: int) -> float | None:
    return round(hits / of, 4) if of else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def measure(backend: Any, turns: list[ModelTurn], max_new_tokens: int | None = None
            ) -> DecisionMetrics:
    """The metrics of the local model `backend` (`HFBackend`: `.model`, `.tokenizer`,
    `.stream`) on `turns`; replies are cut at `max_new_tokens` when given."""
    decided = [t for t in turns if t.label in (Label.APPROVED, Label.EDITED, Label.REJECTED)
               and t.record is not None]
    renderer = Renderer(backend.tokenizer)
    wanted, rejected = [], []
    matched = asked = errors = 0
    for turn in decided:
        assert turn.record is not None
        prompt_text = renderer.prompt(turn)
        if turn.label is Label.REJECTED:
            rejected.append((prompt_text, renderer.completion(turn.prompt, turn.reply)))
        elif turn.label is Label.EDITED and turn.edit is not None:
            wanted.append((prompt_text, renderer.completion(turn.prompt, turn.edit)))
        elif turn.label is Label.APPROVED:
            wanted.append((prompt_text, renderer.completion(turn.prompt, turn.reply)))
        prompt = turn.prompt
        if max_new_tokens is not None:
            prompt = dataclasses.replace(prompt, max_new_tokens=min(prompt.max_new_tokens,
                                                                    max_new_tokens))
        reply = "".join(backend.stream(prompt))
        try:
            proposed = parse(reply, turn.record.proposed.dialect).action
        except ParseError:
            errors += 1
            proposed = None
        if turn.label is not Label.REJECTED:
            asked += 1
            decision = turn.record.decision
            target = decision.action if isinstance(decision, EditAction) else \
                turn.record.proposed.action
            matched += proposed == target
    return DecisionMetrics(
        turns=len(decided), match_rate=_share(matched, asked),
        format_error_rate=_share(errors, len(decided)),
        wanted_logprob=_rounded(mean_logprob(backend.model, backend.tokenizer, wanted)),
        rejected_logprob=_rounded(mean_logprob(backend.model, backend.tokenizer, rejected)),
    )
