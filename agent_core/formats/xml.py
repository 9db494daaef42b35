"""The `xml` dialect: SWE-smith / R2E-Gym function calls.

A turn is free reasoning text, then one call::

    Let me look at the failing function.

    <function=str_replace_editor>
    <parameter=command>view</parameter>
    <parameter=path>/testbed/src/app.py</parameter>
    <parameter=view_range>[10, 20]</parameter>
    </function>

Exactly one leading and one trailing newline is stripped from each parameter value, nothing more
(indentation inside `old_str`/`new_str` is kept). R2E-Gym's names are read too: `execute_bash`
(`cmd`) is bash, `file_editor` is str_replace_editor, `search` (`search_term`, `path`) is search,
`finish` is submit. A missing `</function>` at the very end of the text is tolerated, and
parameters a function does not take are dropped; `ProposedStep.notice` tells the model both. When
a turn holds more than one call, the first is proposed and the notice says the others were not
run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agent_core.actions import Action, Bash, Search, StrReplaceEditor, Submit
from agent_core.formats.common import (
    EDITOR_PARAMS,
    drop_unknown,
    editor_args,
    editor_from_args,
    extra_actions_notice,
    join_notices,
)
from agent_core.formats.dialect import Dialect
from agent_core.formats.errors import ParseError
from agent_core.formats.examples import ToolWords, build_example
from agent_core.formats.prompting import chat_builder
from agent_core.formats.translate import to_editor
from agent_core.steps import ProposedStep

NAME = "xml"
STOP_AFTER: list[str] = ["</function>"]
STOP_BEFORE: list[str] = []
KINDS = frozenset({"bash", "str_replace_editor", "search", "submit"})

TOOLS = (ToolWords("bash", ("command",)), ToolWords("str_replace_editor", EDITOR_PARAMS),
         ToolWords("search", ("search_term", "path")), ToolWords("submit"))
UNCLOSED_NOTICE = (
    "Note: your call had no closing </function>; it was read to the end of your reply. "
    "End every call with </function>."
)

FUNCTION_OPEN = re.compile(r"<function\s*=\s*([^>\s]*)\s*>")
PARAM_OPEN = re.compile(r"<parameter\s*=\s*([^>\s]*)\s*>")
FUNCTION_CLOSE = "</function>"
PARAM_CLOSE = "</parameter>"

# Function names read by this dialect, mapped to action kinds.
FUNCTION_KINDS = {
    "bash": "bash",
    "execute_bash": "bash",
    "str_replace_editor": "str_replace_editor",
    "file_editor": "str_replace_editor",
    "search": "search",
    "submit": "submit",
    "finish": "submit",
}


@dataclass
class FunctionCall:
    """One `<function=NAME>` block as written: its name, raw parameter values and extent."""

    name: str
    params: dict[str, str]
    start: int
    end: int
    closed: bool = True


def strip_one_newline(value: str) -> str:
    """Remove exactly one leading and one trailing newline."""
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def read_function(text: str, match: re.Match[str], dialect: str, example: str) -> FunctionCall:
    """Read the parameters of the function opened by `match`, up to `</function>` or the end."""
    params: dict[str, str] = {}
    pos = match.end()
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return FunctionCall(match.group(1), params, match.start(), len(text), closed=False)
        if text.startswith(FUNCTION_CLOSE, pos):
            end = pos + len(FUNCTION_CLOSE)
            return FunctionCall(match.group(1), params, match.start(), end)
        param = PARAM_OPEN.match(text, pos)
        if param is None:
            raise ParseError(
                f"Inside <function={match.group(1)}> only parameter blocks such as "
                f"<parameter=command>ls</parameter> may appear, closed by </function>; found "
                f"{text[pos:pos + 30]!r}.",
                dialect,
                example,
            )
        name = param.group(1)
        close = text.find(PARAM_CLOSE, param.end())
        if close < 0:
            raise ParseError(
                f"<parameter={name}> is never closed: end each value with </parameter>.",
                dialect,
                example,
            )
        if name in params:
            raise ParseError(f"Parameter `{name}` is given twice.", dialect, example)
        params[name] = strip_one_newline(text[param.end():close])
        pos = close + len(PARAM_CLOSE)


# Parameters each action kind takes, by the function name's kind.
KIND_PARAMS = {
    "bash": ("command", "cmd"),
    "str_replace_editor": EDITOR_PARAMS,
    "search": ("search_term", "pattern", "path"),
    "submit": ("result", "command"),
}


def function_to_action(
    call: FunctionCall, kinds: dict[str, str], dialect: str, example: str
) -> tuple[Action, str | None]:
    """Map a function call to an action and a notice about dropped parameters; `kinds` says which
    names this dialect knows."""
    kind = kinds.get(call.name)
    if kind is None:
        known = ", ".join(sorted(set(kinds) - {"execute_bash", "file_editor", "finish"}))
        raise ParseError(
            f"There is no function named {call.name!r}. Available functions: {known}.",
            dialect,
            example,
        )
    params = dict(call.params)
    if call.name == "file_editor":
        params.pop("concise", None)
    params, notice = drop_unknown(call.name, params, KIND_PARAMS[kind])
    try:
        return _build(call.name, kind, params, dialect, example), notice
    except ParseError as error:
        if notice is None:
            raise
        raise ParseError(f"{error.problem} {notice}", dialect, example) from None


def _build(name: str, kind: str, params: dict[str, str], dialect: str, example: str) -> Action:
    if kind == "bash":
        command = params.get("command", params.get("cmd"))
        if command is None or not command.strip():
            raise ParseError(f"{name} needs a non-empty `command` parameter.", dialect, example)
        return Bash(command=command)
    if kind == "str_replace_editor":
        return editor_from_args(params, dialect, example)
    if kind == "search":
        pattern = params.get("search_term", params.get("pattern"))
        if not pattern:
            raise ParseError("search needs a non-empty `search_term`.", dialect, example)
        path = params.get("path")
        return Search(pattern=pattern, path=path if path else None)
    return Submit(result=params.get("result"))


def span(text: str) -> tuple[int, int] | None:
    """Where the first call lies in `text` (for dialect detection), or None."""
    match = FUNCTION_OPEN.search(text)
    if match is None:
        return None
    try:
        return match.start(), read_function(text, match, NAME, EXAMPLE).end
    except ParseError:
        close = text.find(FUNCTION_CLOSE, match.end())
        return match.start(), len(text) if close < 0 else close + len(FUNCTION_CLOSE)


def parse(text: str) -> ProposedStep:
    """Parse one model turn; raises ParseError with a message for the model."""
    match = FUNCTION_OPEN.search(text)
    if match is None:
        raise ParseError(
            "No function call found. End every reply with exactly one call, starting with "
            "<function= and the function's name (e.g. <function=bash>) and ending with "
            "</function>.",
            NAME,
            EXAMPLE,
        )
    call = read_function(text, match, NAME, EXAMPLE)
    action, dropped = function_to_action(call, FUNCTION_KINDS, NAME, EXAMPLE)
    others = len(FUNCTION_OPEN.findall(text, call.end))
    return ProposedStep(
        thought=text[: call.start].strip(),
        action=action,
        raw=text,
        dialect=NAME,
        notice=join_notices(
            None if call.closed else UNCLOSED_NOTICE,
            extra_actions_notice(1 + others, action.kind),
            dropped,
        ),
    )


def function_params(action: Action) -> tuple[str, dict[str, str]]:
    """The function name and parameter values (as text) that express `action`."""
    if isinstance(action, Bash):
        return "bash", {"command": action.command}
    if isinstance(action, StrReplaceEditor):
        values = editor_args(action)
        text = {k: json.dumps(v) if k == "view_range" else str(v) for k, v in values.items()}
        return "str_replace_editor", text
    if isinstance(action, Search):
        params = {"search_term": action.pattern}
        if action.path is not None:
            params["path"] = action.path
        return "search", params
    if isinstance(action, Submit):
        return "submit", {} if action.result is None else {"result": action.result}
    raise ValueError(
        f"the xml dialect has no function for a {action.kind!r} action; "
        "use agent_core.formats.translate(action, 'xml') to get an equivalent one"
    )


def render_function(name: str, params: dict[str, str]) -> str:
    """`<function=name>` and one parameter block per value (multi-line values on own lines)."""
    parts = [f"<function={name}>"]
    for key, value in params.items():
        if PARAM_CLOSE in value:
            raise ValueError(f"parameter {key!r} contains {PARAM_CLOSE!r}, which xml cannot carry")
        body = f"\n{value}\n" if "\n" in value else value
        parts.append(f"<parameter={key}>{body}</parameter>")
    parts.append(FUNCTION_CLOSE)
    return "\n".join(parts)


def render(action: Action, thought: str = "") -> str:
    """The text a model of this dialect would write to propose `action`."""
    if FUNCTION_OPEN.search(thought):
        raise ValueError("the thought contains '<function=', which would read as a call")
    name, params = function_params(action)
    call = render_function(name, params)
    thought = thought.strip()
    return f"{thought}\n\n{call}" if thought else call


EXAMPLE = build_example(render, TOOLS).text  # (quoted in every ParseError of this dialect)

DIALECT = Dialect(
    name=NAME,
    parse=parse,
    render=render,
    span=span,
    kinds=KINDS,
    example=EXAMPLE,
    tools=TOOLS,
    stop_after=tuple(STOP_AFTER),
    stop_before=tuple(STOP_BEFORE),
    default_profile="swesmith",
    build_prompt=chat_builder(None, tools=False),
    equivalent=to_editor,
    name_hints=("swe-smith", "swesmith", "swe-agent"),
    action_markers=("<function=",),
    action_name=r"<function=([\w-]+)",
)
