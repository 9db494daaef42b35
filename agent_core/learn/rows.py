"""Training rows from the user's decisions, with the exact prompt text each turn had.

A prompt is the text the model read: chat prompts through the chat template (ending with the
generation prompt, as inference had it), completion prompts as they are. A completion is what
follows it: the model's reply, or for an edited step the user's action rendered in the model's
dialect (as the session showed it to the model afterwards), ended the way the model ends a turn
(the template's end-of-turn token for chat prompts; for the text dialect the start of the
`Observation:` that navtui's layout puts next, where generation stops).

* `sft`: `{"prompt", "completion"}` per approved or edited step;
* `dpo`: `{"prompt", "chosen", "rejected"}` per edited step (chosen: the edit; rejected: the
  model's original); an edit reviewed hunk by hunk is one too, its chosen turn proposing only
  the kept hunks (`agent_core.learn.hunk_rows`);
* `kto`: `{"prompt", "completion", "label"}`: approved true, rejected false, an edited step
  twice (the original false, the edit true).

Format errors give no rows (nobody decided on them); neither does an edit that has no form in
the model's dialect (the model was shown a JSON description instead): `Rows.skipped` names them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_core.backends.chat_template import assistant_turn_end, render_prompt, template_kwargs
from agent_core.formats.prompting import LEADING_THOUGHT
from agent_core.learn.history import Label, ModelTurn
from agent_core.prompt_types import Prompt, text_sha256

METHODS = ("sft", "dpo", "kto")
TEXT_TURN_END = "\n\nObservation:"


class RowError(Exception):
    """Rows cannot be made as asked; the message says what to pass instead."""


@dataclass
class Row:
    """One training row and the turn it came from (`name`: `<session> step <n>`)."""

    name: str
    data: dict[str, Any]


@dataclass
class Rows:
    rows: list[Row] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "<name>: why"

    @property
    def data(self) -> list[dict[str, Any]]:
        return [row.data for row in self.rows]


class Renderer:
    """Prompt and completion text as the model reads and writes them, with `tokenizer`'s chat
    template (None: only completion-text prompts can be rendered)."""

    def __init__(self, tokenizer: Any = None) -> None:
        self.tokenizer = tokenizer
        self._end: str | None = None

    def prompt(self, turn: ModelTurn) -> str:
        prompt = turn.prompt
        if prompt.messages is not None and self.tokenizer is None:
            raise RowError(
                f"{turn.name}: a chat prompt needs the model's chat template: pass --tokenizer "
                "(a model directory or Hub id) with the transformers install (`local` extra)"
            )
        return render_prompt(self.tokenizer, prompt, template_kwargs(turn.identity))

    def completion(self, prompt: Prompt, reply: str) -> str:
        """`reply` as a completion of `prompt`, ended the way the model ends its turn."""
        if prompt.messages is None:
            said = LEADING_THOUGHT.sub("", reply, count=1).strip()
            return f" {said}{TEXT_TURN_END}"
        return reply + self.end_of_turn()

    def end_of_turn(self) -> str:
        """What the chat template writes right after an assistant message's text (trailing
        whitespace aside), e.g. Qwen's `<|im_end|>`; the tokenizer's EOS token otherwise."""
        if self._end is None:
            self._end = assistant_turn_end(self.tokenizer)
        return self._end

    def check(self, turn: ModelTurn, text: str) -> None:
        """Refuse a prompt that differs from the one the log says the model read."""
        sent = turn.sent
        if sent is not None and sent.digest_of == "rendered" and text_sha256(text) != sent.sha256:
            raise RowError(
                f"{turn.name}: the rebuilt prompt differs from the one the model read (SHA-256 "
                f"{text_sha256(text)[:12]} vs {sent.sha256[:12]} in the log): the chat template "
                "or the prompt profile changed since; render with the model the session used "
                "(export: --tokenizer MODEL; finetune: --model BASE)"
            )


def _edit_of(turn: ModelTurn) -> str | None:
    return turn.edit if turn.edit and turn.edit != turn.reply else None


Complete = Callable[[str], str]  # a reply -> its completion text


def _sft(turn: ModelTurn, prompt: str, complete: Complete) -> list[dict[str, Any]]:
    chosen = _edit_of(turn) if turn.label is Label.EDITED else turn.reply
    return [{"prompt": prompt, "completion": complete(chosen or "")}]


def _dpo(turn: ModelTurn, prompt: str, complete: Complete) -> list[dict[str, Any]]:
    return [{"prompt": prompt, "chosen": complete(_edit_of(turn) or ""),
             "rejected": complete(turn.reply)}]


def _kto(turn: ModelTurn, prompt: str, complete: Complete) -> list[dict[str, Any]]:
    if turn.label is Label.EDITED:
        return [
            {"prompt": prompt, "completion": complete(turn.reply), "label": False},
            {"prompt": prompt, "completion": complete(_edit_of(turn) or ""), "label": True},
        ]
    return [{"prompt": prompt, "completion": complete(turn.reply),
             "label": turn.label is Label.APPROVED}]


# Per method: the labels it learns from, and the rows one such turn gives.
BUILDERS: dict[str, tuple[frozenset[Label], Callable[[ModelTurn, str, Complete], list[dict]]]] = {
    "sft": (frozenset({Label.APPROVED, Label.EDITED}), _sft),
    "dpo": (frozenset({Label.EDITED}), _dpo),
    "kto": (frozenset({Label.APPROVED, Label.REJECTED, Label.EDITED}), _kto),
}


def build_rows(method: str, turns: Iterable[ModelTurn], renderer: Renderer) -> Rows:
    """The `method` rows (sft | dpo | kto) of `turns`, in order."""
    if method not in BUILDERS:
        raise RowError(f"unknown row format {method!r}; choose one of {', '.join(METHODS)}")
    labels, make = BUILDERS[method]
    out = Rows()
    for turn in turns:
        if turn.label not in labels:
            continue
        if turn.label is Label.EDITED and _edit_of(turn) is None:
            out.skipped.append(f"{turn.name}: the edit has no form in the model's dialect")
            continue
        prompt = renderer.prompt(turn)
        renderer.check(turn, prompt)

        def complete(reply: str, turn: ModelTurn = turn) -> str:
            return renderer.completion(turn.prompt, reply)

        out.rows.extend(Row(turn.name, data) for data in make(turn, prompt, complete))
    return out


def counts(turns: Iterable[ModelTurn]) -> dict[str, int]:
    """How many turns the user approved, rejected and edited."""
    found = {label.value: 0 for label in (Label.APPROVED, Label.REJECTED, Label.EDITED)}
    for turn in turns:
        if turn.label is not Label.UNPARSED:
            found[turn.label.value] += 1
    return found
