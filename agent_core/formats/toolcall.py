"""The `toolcall` dialect: Qwen3's native tool calls (the code-navigator model).

A turn is an optional `<think>...</think>` block and free text, then one call::

    <think>The traceback points at utils.py.</think>
    Let me open it.
    <tool_call>
    {"name": "str_replace_editor", "arguments": {"command": "view", "path": "src/utils.py"}}
    </tool_call>

Tools: `bash` (`command`), `str_replace_editor` (SWE-agent's commands and argument names) and
`submit` (`finish` is read as submit too). The thought is the think block followed by the text
before the call. What real Qwen outputs do is accepted: a missing `</tool_call>` at the end of the
text, `arguments` serialised as a JSON string, raw newlines inside JSON strings, and a
Qwen3-Coder style body (`<function=NAME><parameter=K>V</parameter></function>`) inside
`<tool_call>`. When a turn holds more than one call, the first is proposed and
`ProposedStep.notice` tells the model the others were not run.

Small models often write the call without its tags, bare or in a ```json fence. When a reply has
no `<tool_call>` at all, exactly one untagged `{"name": ..., "arguments": ...}` object naming a
known tool is accepted, with a notice; two or more such objects are refused (no guessing which).
Argument keys a tool does not take (often copied from the schema) are dropped with a notice.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent_core.actions import Action, Bash, StrReplaceEditor, Submit
from agent_core.formats import xml
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

NAME = "toolcall"
STOP_AFTER: list[str] = ["</tool_call>"]
STOP_BEFORE: list[str] = []
KINDS = frozenset({"bash", "str_replace_editor", "submit"})

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

TOOLS = (ToolWords("bash", ("command",)), ToolWords("str_replace_editor", EDITOR_PARAMS),
         ToolWords("submit"))

# Whitespace, and an opening ``` fence some models put around the JSON.
BODY_START = re.compile(r"\s*(?:```[a-z]*\s*)?")
# Where an untagged call object may start: `{` then its "name" or "arguments" key.
UNTAGGED_START = re.compile(r'\{\s*"(?:name|arguments)"\s*:')
# An opening fence (```json) right before an untagged call: not part of the thought.
FENCE_TAIL = re.compile(r"```[a-z]*\s*\Z")
UNTAGGED_NOTICE = (
    "Note: untagged tool call accepted. Your call had no <tool_call> tags; write every call "
    "between <tool_call> and </tool_call>."
)

TOOL_KINDS = {
    "bash": "bash",
    "str_replace_editor": "str_replace_editor",
    "submit": "submit",
    "finish": "submit",
}


def split_think(text: str) -> tuple[str, str]:
    """(think text, the rest).

    The block opens the reply (`<think>...</think>`), or only its end is there because the chat
    template opened it; a `</think>` after the first `<tool_call>` is argument text, not a block.
    """
    stripped = text.lstrip()
    if stripped.startswith(THINK_OPEN):
        close = stripped.find(THINK_CLOSE)
        if close < 0:
            return stripped[len(THINK_OPEN):].strip(), ""
        return stripped[len(THINK_OPEN): close].strip(), stripped[close + len(THINK_CLOSE):]
    call = text.find(OPEN)
    close = text.find(THINK_CLOSE, 0, len(text) if call < 0 else call)
    if close < 0:
        return "", text
    return text[:close].strip(), text[close + len(THINK_CLOSE):]


def decode_json_call(text: str, start: int) -> tuple[dict[str, Any], int]:
    """The `{"name": ..., "arguments": ...}` object at `start`, and where it ends."""
    try:
        obj, end = json.JSONDecoder(strict=False).raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        raise ParseError(
            f"The tool call is not valid JSON ({getattr(exc, 'msg', 'nested too deeply')}). "
            'Write exactly one object {"name": ..., "arguments": {...}} between <tool_call> and '
            "</tool_call>, with quotes "
            "and newlines inside strings escaped.",
            NAME,
            EXAMPLE,
        ) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        raise ParseError(
            'The tool call must be a JSON object with a "name" string and an "arguments" object.',
            NAME,
            EXAMPLE,
        )
    return obj, end


def call_arguments(obj: dict[str, Any]) -> dict[str, Any]:
    """`arguments` as a dict, also when the model serialised it as a JSON string."""
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args, strict=False) if args.strip() else {}
        except (ValueError, RecursionError):
            raise ParseError(
                '"arguments" is a string that is not a JSON object; give it as an object.',
                NAME,
                EXAMPLE,
            ) from None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ParseError('"arguments" must be a JSON object.', NAME, EXAMPLE)
    return args


def tool_action(name: str, args: dict[str, Any]) -> tuple[Action, str | None]:
    """Map a tool name and its arguments to an action, and a notice about ignored arguments."""
    kind = TOOL_KINDS.get(name)
    if kind is None:
        raise ParseError(
            f"There is no tool named {name!r}. Available tools: bash, str_replace_editor, submit.",
            NAME,
            EXAMPLE,
        )
    allowed = {"str_replace_editor": EDITOR_PARAMS, "bash": ("command",), "submit": ("result",)}
    args, notice = drop_unknown(name, args, allowed[kind])
    try:
        return _build(kind, args), notice
    except ParseError as error:
        if notice is None:
            raise
        raise ParseError(f"{error.problem} {notice}", NAME, EXAMPLE) from None


def _build(kind: str, args: dict[str, Any]) -> Action:
    if kind == "str_replace_editor":
        return editor_from_args(args, NAME, EXAMPLE)
    if kind == "bash":
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ParseError('bash needs a non-empty "command" string.', NAME, EXAMPLE)
        return Bash(command=command)
    result = args.get("result")
    return Submit(result=None if result is None else str(result))


def read_call(text: str, start: int) -> tuple[Action, str | None, int]:
    """The action whose body starts at `start` (just after `<tool_call>`), a notice about
    ignored arguments, and where the call ends.

    The body is JSON (optionally in a ``` fence) or a Qwen3-Coder `<function=...>` block. Reading
    it before looking for `</tool_call>` lets argument values contain that tag.
    """
    body = BODY_START.match(text, start)
    pos = body.end() if body is not None else start
    if text.startswith(("{", "["), pos):
        obj, end = decode_json_call(text, pos)
        return *tool_action(obj["name"], call_arguments(obj)), end
    match = xml.FUNCTION_OPEN.match(text, pos)
    if match is not None:
        call = xml.read_function(text, match, NAME, EXAMPLE)
        return *tool_action(call.name, dict(call.params)), call.end
    raise ParseError(
        'Between <tool_call> and </tool_call> put one JSON object {"name": ..., "arguments": '
        "{...}}.",
        NAME,
        EXAMPLE,
    )


def span(text: str) -> tuple[int, int] | None:
    """Where the first call lies in `text` (for dialect detection), or None."""
    start = text.find(OPEN)
    if start < 0:
        return None
    try:
        _, _, end = read_call(text, start + len(OPEN))
    except ParseError:
        end = start
    close = text.find(CLOSE, end)
    return start, len(text) if close < 0 else close + len(CLOSE)


def parse(text: str) -> ProposedStep:
    """Parse one model turn; raises ParseError with a message for the model."""
    think, rest = split_think(text)
    start = rest.find(OPEN)
    if start < 0:
        return parse_untagged(text, think, rest)
    action, dropped, end = read_call(rest, start + len(OPEN))
    close = rest.find(CLOSE, end)
    after = "" if close < 0 else rest[close + len(CLOSE):]
    thought = "\n\n".join(part for part in (think, rest[:start].strip()) if part)
    return ProposedStep(
        thought=thought,
        action=action,
        raw=text,
        dialect=NAME,
        notice=join_notices(extra_actions_notice(1 + after.count(OPEN), action.kind), dropped),
    )


def untagged_calls(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(start, end, object) of each top-level JSON object in `text` shaped like a tool call."""
    found: list[tuple[int, int, dict[str, Any]]] = []
    pos = 0
    while (match := UNTAGGED_START.search(text, pos)) is not None:
        try:
            obj, end = json.JSONDecoder(strict=False).raw_decode(text, match.start())
        except (ValueError, RecursionError):
            pos = match.start() + 1
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str) and (
            "arguments" in obj or "parameters" in obj
        ):
            found.append((match.start(), end, obj))
        pos = end
    return found


def has_untagged_call(text: str) -> bool:
    """True when `text` has no `<tool_call>` and exactly one untagged call naming a known tool
    (how `detect_dialect` reads such a reply: toolcall is its only reading)."""
    rest = split_think(text)[1]
    if OPEN in rest:
        return False
    calls = untagged_calls(rest)
    return len(calls) == 1 and calls[0][2]["name"] in TOOL_KINDS


def parse_untagged(text: str, think: str, rest: str) -> ProposedStep:
    """A reply without `<tool_call>`: its one untagged call, or the error saying what to write."""
    calls = untagged_calls(rest)
    if not calls:
        raise ParseError(
            "No tool call found. Every reply must end with exactly one tool call between "
            "<tool_call> and </tool_call>; call submit when the work is done.",
            NAME,
            EXAMPLE,
        )
    if len(calls) > 1:
        names = ", ".join(repr(obj["name"]) for _, _, obj in calls)
        raise ParseError(
            f"Found {len(calls)} tool calls without <tool_call> tags ({names}) and none with "
            "tags. Write exactly one call, between <tool_call> and </tool_call>.",
            NAME,
            EXAMPLE,
        )
    start, _, obj = calls[0]
    action, dropped = tool_action(obj["name"], call_arguments(obj))
    before = FENCE_TAIL.sub("", rest[:start]).strip()
    thought = "\n\n".join(part for part in (think, before) if part)
    return ProposedStep(
        thought=thought,
        action=action,
        raw=text,
        dialect=NAME,
        notice=join_notices(UNTAGGED_NOTICE, dropped),
    )


def tool_call(action: Action) -> dict[str, Any]:
    """`{"name": ..., "arguments": ...}` for `action`; ValueError for kinds without a tool."""
    if isinstance(action, Bash):
        return {"name": "bash", "arguments": {"command": action.command}}
    if isinstance(action, StrReplaceEditor):
        return {"name": "str_replace_editor", "arguments": editor_args(action)}
    if isinstance(action, Submit):
        args = {} if action.result is None else {"result": action.result}
        return {"name": "submit", "arguments": args}
    raise ValueError(
        f"the toolcall dialect has no tool for a {action.kind!r} action; "
        "use agent_core.formats.translate(action, 'toolcall') to get an equivalent one"
    )


def render(action: Action, thought: str = "") -> str:
    """The text Qwen3 would write to propose `action` (the chat template's tool-call shape)."""
    for marker in (OPEN, THINK_OPEN, THINK_CLOSE):
        if marker in thought:
            raise ValueError(f"the thought contains {marker!r}, which would change its meaning")
    call = f"{OPEN}\n{json.dumps(tool_call(action), ensure_ascii=False)}\n{CLOSE}"
    thought = thought.strip()
    return f"{thought}\n{call}" if thought else call


def editable(action: Action) -> str:
    """The call laid out for a person to edit: the JSON indented, one key per line."""
    body = json.dumps(tool_call(action), indent=2, ensure_ascii=False)
    return f"{OPEN}\n{body}\n{CLOSE}"


EXAMPLE = build_example(render, TOOLS).text  # (quoted in every ParseError of this dialect)

DIALECT = Dialect(
    name=NAME,
    parse=parse,
    render=render,
    span=span,
    kinds=KINDS,
    example=EXAMPLE,
    tools=TOOLS,
    profile_tools=True,
    stop_after=tuple(STOP_AFTER),
    stop_before=tuple(STOP_BEFORE),
    default_profile="swesmith",
    build_prompt=chat_builder(lambda assistant: span(assistant) is not None, tools=True),
    equivalent=to_editor,
    editable=editable,
    name_hints=("navigator",),
    action_markers=(OPEN,),
    action_name=r'"name"\s*:\s*"([\w-]+)"|<function=([\w-]+)',
)
