"""One vocabulary of actions for every model dialect.

Dialect modules (`agent_core.formats`) only translate text to and from these dataclasses; the
executor only ever sees these. Field names are a contract (tests and exports rely on them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar


@dataclass
class Bash:
    """Run `command` in the session's persistent bash."""

    kind: ClassVar[str] = "bash"
    command: str


@dataclass
class Read:
    """Show a file with numbered lines."""

    kind: ClassVar[str] = "read"
    path: str


@dataclass
class Search:
    """`grep -rn pattern path` (path None means the repository root)."""

    kind: ClassVar[str] = "search"
    pattern: str
    path: str | None = None


@dataclass
class Edit:
    """Replace lines `start`..`end` (1-based, inclusive) of `path` with `content`.

    `end == start - 1` inserts `content` before line `start`; empty `content` deletes the lines.
    """

    kind: ClassVar[str] = "edit"
    path: str
    start: int
    end: int
    content: str


STR_REPLACE_EDITOR_COMMANDS = ("view", "create", "str_replace", "insert", "undo_edit")


@dataclass
class StrReplaceEditor:
    """SWE-agent's editor tool: view / create / str_replace / insert / undo_edit."""

    kind: ClassVar[str] = "str_replace_editor"
    command: str
    path: str
    file_text: str | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    view_range: list[int] | None = None


@dataclass
class Submit:
    """End the session; the working tree's diff against the baseline is the result."""

    kind: ClassVar[str] = "submit"
    result: str | None = None


Action = Bash | Read | Search | Edit | StrReplaceEditor | Submit

ACTION_TYPES: dict[str, type[Action]] = {
    cls.kind: cls for cls in (Bash, Read, Search, Edit, StrReplaceEditor, Submit)
}

def action_to_dict(action: Action) -> dict[str, Any]:
    """JSON-ready form: `{"kind": ..., **fields}` with None fields left out."""
    data = {k: v for k, v in asdict(action).items() if v is not None}
    return {"kind": action.kind, **data}


def action_from_dict(data: dict[str, Any]) -> Action:
    """Inverse of `action_to_dict`; raises ValueError on an unknown kind or field."""
    kind = data.get("kind")
    cls = ACTION_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown action kind {kind!r}; expected one of {sorted(ACTION_TYPES)}")
    known = {f.name for f in fields(cls)}
    extra = set(data) - known - {"kind"}
    if extra:
        raise ValueError(f"unknown field(s) for {kind}: {sorted(extra)}")
    return cls(**{k: v for k, v in data.items() if k != "kind"})
