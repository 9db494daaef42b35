"""Pieces shared by the dialect modules: argument coercion and the extra-actions notice."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agent_core.actions import STR_REPLACE_EDITOR_COMMANDS, StrReplaceEditor
from agent_core.formats.errors import ParseError

EDITOR_PARAMS = ("command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range")

# Arguments each editor command cannot do without.
EDITOR_REQUIRED = {
    "view": (),
    "create": ("file_text",),
    "str_replace": ("old_str",),
    "insert": ("insert_line", "new_str"),
    "undo_edit": (),
}


def extra_actions_notice(total: int, first_kind: str) -> str | None:
    """The sentence the model reads when its turn held `total` actions and only the first ran."""
    if total <= 1:
        return None
    others = total - 1
    noun = "action was" if others == 1 else "actions were"
    return (
        f"Note: your reply contained {total} actions; only the first one ({first_kind}) was "
        f"considered and the other {others} {noun} NOT run. Propose exactly one action per reply."
    )


def join_notices(*notices: str | None) -> str | None:
    """The notices that are set, one per line; None when there are none."""
    present = [notice for notice in notices if notice]
    return "\n".join(present) if present else None


def drop_unknown(
    name: str, args: dict[str, Any], allowed: Iterable[str]
) -> tuple[dict[str, Any], str | None]:
    """`args` without the keys `name` does not take, and a notice naming the dropped ones.

    Real models copy keys from the tool schema (`"required": []`) next to the real arguments;
    those are ignored, not refused. Wrong *types* of real arguments stay format errors.
    """
    allowed = tuple(allowed)
    unknown = sorted(set(args) - set(allowed))
    if not unknown:
        return args, None
    kept = {key: value for key, value in args.items() if key in allowed}
    notice = (
        f"Note: {name} has no parameter(s) {', '.join(unknown)}; they were ignored. "
        f"It takes: {', '.join(allowed) or 'no parameters'}."
    )
    return kept, notice


def as_int(value: Any, name: str, dialect: str, example: str) -> int:
    """An integer argument given as a JSON number or as text such as "12"."""
    if isinstance(value, bool):
        raise ParseError(f"`{name}` must be an integer, got {value!r}.", dialect, example)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ParseError(f"`{name}` must be an integer, got {value!r}.", dialect, example)


def as_range(value: Any, dialect: str, example: str) -> list[int]:
    """`view_range` given as a JSON list or as text like "[10, 20]"."""
    if isinstance(value, str):
        try:
            value = json.loads(value.strip())
        except (ValueError, RecursionError):
            raise ParseError(
                f"`view_range` must be a list of two integers like [10, 20], got {value!r}.",
                dialect,
                example,
            ) from None
    if not isinstance(value, list) or len(value) != 2:
        raise ParseError(
            f"`view_range` must be a list of two integers like [10, 20], got {value!r}.",
            dialect,
            example,
        )
    return [as_int(v, "view_range", dialect, example) for v in value]


def as_text(value: Any, name: str, dialect: str, example: str) -> str:
    """A text argument; numbers are accepted and written back as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ParseError(f"`{name}` must be text, got {value!r}.", dialect, example)


def editor_from_args(args: dict[str, Any], dialect: str, example: str) -> StrReplaceEditor:
    """Build a `StrReplaceEditor` from raw tool arguments, checking what each command needs."""
    unknown = sorted(set(args) - set(EDITOR_PARAMS))
    if unknown:
        raise ParseError(
            f"str_replace_editor has no parameter(s) {', '.join(unknown)}; "
            f"its parameters are: {', '.join(EDITOR_PARAMS)}.",
            dialect,
            example,
        )
    command = args.get("command")
    if command not in STR_REPLACE_EDITOR_COMMANDS:
        raise ParseError(
            "str_replace_editor `command` must be one of "
            f"{', '.join(STR_REPLACE_EDITOR_COMMANDS)}; got {command!r}.",
            dialect,
            example,
        )
    if "path" not in args:
        raise ParseError(f"str_replace_editor {command} needs a `path`.", dialect, example)
    missing = [name for name in EDITOR_REQUIRED[command] if args.get(name) is None]
    if missing:
        raise ParseError(
            f"str_replace_editor {command} needs: {', '.join(missing)}.", dialect, example
        )
    step = StrReplaceEditor(command=command, path=as_text(args["path"], "path", dialect, example))
    for name in ("file_text", "old_str", "new_str"):
        if args.get(name) is not None:
            setattr(step, name, as_text(args[name], name, dialect, example))
    if args.get("insert_line") is not None:
        step.insert_line = as_int(args["insert_line"], "insert_line", dialect, example)
    if args.get("view_range") is not None:
        step.view_range = as_range(args["view_range"], dialect, example)
    return step


def editor_args(action: StrReplaceEditor) -> dict[str, Any]:
    """The tool arguments of an editor action, None fields left out, in SWE-agent's order."""
    values = {name: getattr(action, name) for name in EDITOR_PARAMS}
    return {name: value for name, value in values.items() if value is not None}
