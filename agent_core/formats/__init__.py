"""Model dialects: turn a model's text into one `ProposedStep`, and an action back into text.

Each dialect is one module of this package that defines `DIALECT`, a `Dialect`
(`agent_core.formats.dialect`): parse, render, span, kinds, example, stop strings, prompt
layout, default prompt profile. The modules are found by scanning this package, so adding a
dialect is adding a module (and, if its words differ from every profile's, a prompt profile in
`agent_core/profiles/`). Today: `text`, `toolcall`, `xml`.

One action per turn is the rule. When a turn holds more than one action, only the first is
proposed; the others are never run, and `ProposedStep.notice` holds a sentence for the model
saying so (the session appends it to the next observation).

`parse` raises only `ParseError`, whose message is written for the model. `dialect="auto"` picks
the dialect by content (see `detect_dialect`); when two readings are possible it refuses to guess
and raises ParseError.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from agent_core.actions import Action, Bash
from agent_core.formats.dialect import Dialect, Turn
from agent_core.formats.errors import ParseError
from agent_core.formats.translate import translate
from agent_core.steps import ProposedStep


def _discover() -> dict[str, Dialect]:
    found: dict[str, Dialect] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        dialect = getattr(module, "DIALECT", None)
        if isinstance(dialect, Dialect):
            found[dialect.name] = dialect
    return found


REGISTRY: dict[str, Dialect] = _discover()
DIALECTS: tuple[str, ...] = tuple(REGISTRY)

__all__ = [
    "DIALECTS",
    "Dialect",
    "ParseError",
    "Turn",
    "detect_dialect",
    "dialect_from_names",
    "dialect_words",
    "get_dialect",
    "parse",
    "render",
    "translate",
]


def get_dialect(dialect: str) -> Dialect:
    """The named dialect; ValueError names the valid ones."""
    try:
        return REGISTRY[dialect]
    except KeyError:
        raise ValueError(
            f"unknown dialect {dialect!r}; choose one of {', '.join(DIALECTS)}"
        ) from None


def dialect_from_names(names: Iterable[str | None]) -> str | None:
    """The dialect a model's, adapter's or preset's name gives away (`Dialect.name_hints`, the
    dialects in name order), or None."""
    joined = " ".join(name for name in names if name).lower()
    return next(
        (d.name for d in REGISTRY.values() if any(hint in joined for hint in d.name_hints)), None
    )


def detect_dialect(raw: str) -> str | None:
    """The dialect `raw` is written in, or None when it has no action or is ambiguous.

    Several dialects' markers may appear (a Qwen3-Coder body in a `<tool_call>`, an `Action:` line
    inside an xml value, `<function=` inside a text-dialect bash command). The dialect whose first
    action encloses every other marker wins, except that a text action enclosing a call that
    toolcall or xml could run by itself is ambiguous (e.g. a think block with an `Action:` line
    before a real tool call), so None. A reply without any marker but with exactly one untagged
    `{"name": <known tool>, "arguments": ...}` object is toolcall.
    """
    found = {name: s for name, d in REGISTRY.items() if (s := d.span(raw)) is not None}
    if not found:  # no marker of any dialect: one untagged tool call is the only reading left
        from agent_core.formats.toolcall import has_untagged_call

        return "toolcall" if has_untagged_call(raw) else None
    for name, (start, end) in found.items():
        if not all(start <= other[0] < end for other in found.values()):
            continue
        if name == "text" and any(parses(raw, other) for other in found if other != "text"):
            return None
        return name
    return None


def dialect_words(dialect: str) -> str:
    """`toolcall` -> "expected the toolcall format"; `auto` -> "in none of the known formats"."""
    return "in none of the known formats" if dialect == "auto" else f"expected the {dialect} format"


def parses(raw: str, dialect: str) -> bool:
    try:
        REGISTRY[dialect].parse(raw)
    except ParseError:
        return False
    return True


def parse(raw: str, dialect: str = "auto") -> ProposedStep:
    """Parse one model turn into a proposed step; raises ParseError (message for the model)."""
    if dialect == "auto":
        detected = detect_dialect(raw)
        if detected is None:
            raise ParseError(ambiguity(raw), "auto")
        dialect = detected
    return get_dialect(dialect).parse(raw)


def ambiguity(raw: str) -> str:
    """Why `auto` could not pick a dialect."""
    found = [name for name, d in REGISTRY.items() if d.span(raw) is not None]
    if not found:  # one real action in each format, never a shape a model could copy as it is
        shown = ", ".join(f"{' '.join(d.render(Bash('ls')).split())} ({name})"
                          for name, d in REGISTRY.items())
        return f"No action found. End your reply with exactly one action, such as {shown}."
    return (
        f"The reply mixes formats ({', '.join(found)}): write exactly one action in one format."
    )


def render(action: Action, dialect: str, thought: str = "") -> str:
    """The text a model of `dialect` writes to propose `action` (inverse of `parse`).

    ValueError when the dialect cannot express the action's kind (see `translate`) or a value
    cannot be carried by the dialect's syntax.
    """
    return get_dialect(dialect).render(action, thought)
