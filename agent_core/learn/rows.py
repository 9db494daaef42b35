"""Training rows from the user's decisions, with the exact prompt text each turn had.

A prompt is the text the model read: chat prompts through the chat template (ending with the
generation prompt, as inference had it), completion prompts as they are. A completion is what
follows it: the model's reply, or for an edited step the user's action rendered in the model's
dialect (as the session showed it to the model afterwards), ended the way the model ends a turn
(the template's end-of-turn token for chat prompts; for the text dialect the start of the
`Observation:` that navtui's layout puts next, where generation stops).

* `sft`: `{"prompt", "completion"}` per approved or edited step;
* `dpo`: `{"prompt", "chosen", "rejected"}` per edited step (chosen: the edit; rejected: the
  model's original) and per rejected step the user then answered at that same turn: rejected,
  the reply they refused; chosen, the next reply of that session they approved (or their edit
  of it), the one written after their feedback (`rejection_pairs`). The prompt is the one the
  refused reply answered, so the pair teaches the model to give, without the feedback, what it
  gave once told. A rejection with no approved reply after it has no pair (`kto` has a row).
  An edit reviewed hunk by hunk is an edit too, its chosen turn proposing only the kept hunks
  (`agent_core.learn.hunk_rows`);
* `kto`: `{"prompt", "completion", "label"}`: approved true, rejected false, an edited step
  twice (the original false, the edit true).

An edit of a reply that opened with a thinking block keeps that block (`keep_form`). Prompts
are checked against the log (`Renderer.check`): a local model's rendered text by its digest; a
server's or the replay backend's by the prompt profile's content and the digest of the prompt
navtui built.

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
from agent_core.events import PromptSent
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
        """Refuse a prompt that differs from the one the log says the model read: the rendered
        text for a local model; for a server or the replay backend (which log a request body or
        the messages), the profile's content and the prompt navtui built (`check_built`)."""
        sent = turn.sent
        if sent is None:
            return
        if sent.digest_of != "rendered":
            check_built(turn, sent)
        elif text_sha256(text) != sent.sha256:
            raise RowError(
                f"{turn.name}: the rebuilt prompt differs from the one the model read (SHA-256 "
                f"{text_sha256(text)[:12]} vs {sent.sha256[:12]} in the log): the chat template "
                "or the prompt profile changed since; render with the model the session used "
                "(export: --tokenizer MODEL; finetune: --model BASE)"
            )


def check_built(turn: ModelTurn, sent: PromptSent) -> None:
    """A server or replay turn: its profile must still hash as it did, and the prompt rebuilt
    from the log must be the one built then (`prompt_sha256`; the `messages` digest itself for
    replay logs older than it)."""
    from agent_core import prompts
    from agent_core.prompt_log import built_sha256, profile_sha256

    profile = prompts.profile_for(sent.dialect, sent.profile)
    if profile_sha256(profile) != sent.profile_sha256:
        raise RowError(
            f"{turn.name}: the prompt profile {sent.profile!r} is not the one the session used "
            "(its content changed since): restore it, or leave this session out (--sessions)"
        )
    logged = sent.prompt_sha256 or (sent.sha256 if sent.digest_of == "messages" else None)
    if logged is not None and built_sha256(turn.prompt) != logged:
        raise RowError(
            f"{turn.name}: the prompt rebuilt from the log differs from the one the session "
            f"built (SHA-256 {built_sha256(turn.prompt)[:12]} vs {logged[:12]})"
        )


def keep_form(reply: str, edit: str) -> str:
    """`edit` in the form the model wrote `reply`: when the reply opens with a thinking block
    (`<think>...</think>`, or only its end when the chat template opened it), the edit keeps that
    block word for word and its call follows it, as the model would have written it; the edit
    as rendered (the thought as plain text before the call) would teach a form the model never
    used, and make DPO's chosen and rejected differ in it."""
    from agent_core.formats.toolcall import OPEN, THINK_CLOSE, split_think

    close, call = reply.find(THINK_CLOSE), reply.find(OPEN)
    if close < 0 or 0 <= call < close or THINK_CLOSE in edit:
        return edit
    end = close + len(THINK_CLOSE)
    while end < len(reply) and reply[end].isspace():
        end += 1
    think = split_think(reply)[0]
    rest = edit.strip()
    if think and rest.startswith(think):
        rest = rest[len(think):].lstrip()
    return reply[:end] + rest


def edit_of(turn: ModelTurn) -> str | None:
    """The user's edit of an edited turn, in the model's form (`keep_form`); None when there is
    none in the model's dialect."""
    if not turn.edit or turn.edit == turn.reply:
        return None
    return keep_form(turn.reply, turn.edit)


Complete = Callable[[str], str]  # a reply -> its completion text


def chosen_reply(turn: ModelTurn) -> str | None:
    """What the user wanted at an approved or edited turn: the reply, or their edit of it."""
    return edit_of(turn) if turn.label is Label.EDITED else turn.reply


def _sft(turn: ModelTurn, prompt: str, complete: Complete) -> list[dict[str, Any]]:
    return [{"prompt": prompt, "completion": complete(chosen_reply(turn) or "")}]


def rejection_pairs(turns: Iterable[ModelTurn]) -> dict[int, ModelTurn]:
    """For each rejected turn (by `id`), the turn of the same session the user then approved
    or edited, after any further rejections and format errors; rejections with none are left
    out (see `unpaired_rejections`)."""
    pairs: dict[int, ModelTurn] = {}
    waiting: list[ModelTurn] = []
    for turn in turns:
        if waiting and turn.session != waiting[-1].session:
            waiting = []
        if turn.label is Label.REJECTED:
            waiting.append(turn)
        elif turn.label in (Label.APPROVED, Label.EDITED) and chosen_reply(turn) is not None:
            pairs.update((id(refused), turn) for refused in waiting)
            waiting = []
    return pairs


def unpaired_rejections(turns: list[ModelTurn]) -> list[ModelTurn]:
    """Rejected turns no approved reply followed: DPO has no pair for them."""
    pairs = rejection_pairs(turns)
    return [t for t in turns if t.label is Label.REJECTED and id(t) not in pairs]


def _dpo(turn: ModelTurn, prompt: str, complete: Complete,
         then: ModelTurn | None = None) -> list[dict[str, Any]]:
    chosen = chosen_reply(then) if then is not None else edit_of(turn)
    return [{"prompt": prompt, "chosen": complete(chosen or ""), "rejected": complete(turn.reply)}]


def _kto(turn: ModelTurn, prompt: str, complete: Complete) -> list[dict[str, Any]]:
    if turn.label is Label.EDITED:
        return [
            {"prompt": prompt, "completion": complete(turn.reply), "label": False},
            {"prompt": prompt, "completion": complete(edit_of(turn) or ""), "label": True},
        ]
    return [{"prompt": prompt, "completion": complete(turn.reply),
             "label": turn.label is Label.APPROVED}]


# Per method: the labels it learns from, and the rows one such turn gives.
BUILDERS: dict[str, tuple[frozenset[Label], Callable[..., list[dict[str, Any]]]]] = {
    "sft": (frozenset({Label.APPROVED, Label.EDITED}), _sft),
    "dpo": (frozenset({Label.EDITED, Label.REJECTED}), _dpo),
    "kto": (frozenset({Label.APPROVED, Label.REJECTED, Label.EDITED}), _kto),
}


def build_rows(method: str, turns: Iterable[ModelTurn], renderer: Renderer) -> Rows:
    """The `method` rows (sft | dpo | kto) of `turns`, in order."""
    if method not in BUILDERS:
        raise RowError(f"unknown row format {method!r}; choose one of {', '.join(METHODS)}")
    labels, make = BUILDERS[method]
    turns = list(turns)
    pairs = rejection_pairs(turns) if method == "dpo" else {}
    out = Rows()
    for turn in turns:
        if turn.label not in labels:
            continue
        if turn.label is Label.EDITED and edit_of(turn) is None:
            out.skipped.append(f"{turn.name}: the edit has no form in the model's dialect")
            continue
        extra: dict[str, ModelTurn] = {}
        if method == "dpo" and turn.label is Label.REJECTED:
            if id(turn) not in pairs:
                out.skipped.append(f"{turn.name}: rejected, and no reply was approved after it: "
                                   "no DPO pair (kto rows keep it)")
                continue
            extra = {"then": pairs[id(turn)]}
        prompt = renderer.prompt(turn)
        renderer.check(turn, prompt)

        def complete(reply: str, turn: ModelTurn = turn) -> str:
            return renderer.completion(turn.prompt, reply)

        out.rows.extend(Row(turn.name, data) for data in make(turn, prompt, complete, **extra))
    return out


def counts(turns: Iterable[ModelTurn]) -> dict[str, int]:
    """How many turns the user approved, rejected and edited."""
    found = {label.value: 0 for label in (Label.APPROVED, Label.REJECTED, Label.EDITED)}
    for turn in turns:
        if turn.label is not Label.UNPARSED:
            found[turn.label.value] += 1
    return found
