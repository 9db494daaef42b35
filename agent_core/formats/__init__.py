"""Model dialects: turn a model's text into one `ProposedStep`, and an action back into text.

Three dialects, one module each (`text`, `toolcall`, `xml`); each exports `parse`, `render`,
`span`, `KINDS` (the action kinds it can express), `EXAMPLE`, and the stop strings backends use:
`STOP_AFTER` (generation ends after them, they stay in the output) and `STOP_BEFORE` (generation
ends before them, they are cut).

One action per turn is the rule. When a turn holds more than one action, only the first is
proposed; the others are never run, and `ProposedStep.notice` holds a sentence for the model
saying so (the session appends it to the next observation).

`parse` raises only `ParseError`, whose message is written for the model. `dialect="auto"` picks
the dialect whose action encloses every other dialect's marker (e.g. a `<tool_call>` holding a
Qwen3-Coder `<function=...>` body is toolcall); when two dialects' actions lie side by side it
refuses to guess and raises ParseError.
"""

from __future__ import annotations

from types import ModuleType

from agent_core.actions import Action
from agent_core.formats import text, toolcall, xml
from agent_core.formats.errors import ParseError
from agent_core.formats.translate import translate
from agent_core.steps import ProposedStep

DIALECTS = ("text", "toolcall", "xml")
MODULES: dict[str, ModuleType] = {"text": text, "toolcall": toolcall, "xml": xml}

__all__ = [
    "DIALECTS",
    "ParseError",
    "detect_dialect",
    "dialect_module",
    "parse",
    "render",
    "translate",
]


def dialect_module(dialect: str) -> ModuleType:
    """The module of a named dialect; ValueError names the valid ones."""
    try:
        return MODULES[dialect]
    except KeyError:
        raise ValueError(f"unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}") from None


def detect_dialect(raw: str) -> str | None:
    """The dialect `raw` is written in, or None when it has no action or is ambiguous."""
    spans = {name: module.span(raw) for name, module in MODULES.items()}
    found = {name: s for name, s in spans.items() if s is not None}
    for name, (start, end) in found.items():
        if all(start <= other[0] < end for other in found.values()):
            return name
    return None


def parse(raw: str, dialect: str = "auto") -> ProposedStep:
    """Parse one model turn into a proposed step; raises ParseError (message for the model)."""
    if dialect == "auto":
        detected = detect_dialect(raw)
        if detected is None:
            raise ParseError(ambiguity(raw), "auto")
        dialect = detected
    return dialect_module(dialect).parse(raw)


def ambiguity(raw: str) -> str:
    """Why `auto` could not pick a dialect."""
    found = [name for name, module in MODULES.items() if module.span(raw) is not None]
    if not found:
        return (
            "No action found. Propose one action, e.g. `Action: bash ls` (text), "
            '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call> (toolcall) '
            "or <function=bash><parameter=command>ls</parameter></function> (xml)."
        )
    return (
        f"The reply mixes formats ({', '.join(found)}): write exactly one action in one format."
    )


def render(action: Action, dialect: str, thought: str = "") -> str:
    """The text a model of `dialect` writes to propose `action` (inverse of `parse`).

    ValueError when the dialect cannot express the action's kind (see `translate`) or a value
    cannot be carried by the dialect's syntax.
    """
    return dialect_module(dialect).render(action, thought)
