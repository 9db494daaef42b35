"""The shape of a prompt profile, checked when a profile file is read.

Every key a profile may hold, its type, and for each template the variables navtui renders it
with: a misspelt key, a value of the wrong type, a template that does not compile or that uses
a variable it is never given fails when the profile loads, naming the file, the line, the key and
what was expected, instead of when the session first needs that text.

A template is looked up per dialect first (`instance_template_text` before `instance_template`),
so a template key is one of `TEMPLATES` or one of them followed by `_<dialect>`; which dialects
exist is the dialects' business (`agent_core.prompts.profile_for` checks the suffix).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
import jinja2.meta
import jinja2.sandbox
import yaml

# Jinja2 with its defaults, as SWE-agent renders its templates (a template's single trailing
# newline is dropped), but failing loudly on a missing variable, and in Jinja's immutable
# sandbox: a profile is data (it may come from anywhere), so no template reaches Python's
# internals (`cycler.__init__.__globals__.os`) or changes what it is given.
ENV = jinja2.sandbox.ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined, autoescape=False,
)

# Template name -> the variables navtui renders it with.
TEMPLATES: dict[str, frozenset[str]] = {
    "system_template": frozenset(),
    "instance_template": frozenset({"problem_statement", "working_dir"}),
    "next_step_template": frozenset({"observation"}),
    "next_step_no_output_template": frozenset(),
    "next_step_truncated_observation_template": frozenset(
        {"observation", "max_observation_length", "elided_chars"}
    ),
    "format_error_template": frozenset({"error"}),
    "rejection_template": frozenset({"feedback"}),
    "user_message_template": frozenset({"message"}),
    "user_command_template": frozenset({"command", "observation"}),
}
EXIT_CODE_VARIABLES = frozenset({"exit_code"})


class ProfileError(Exception):
    """A profile that cannot be found, read or used; the message names the fix."""


@dataclass(frozen=True)
class ToolArgument:
    """One argument of a tool, as SWE-agent's tool configs write it."""

    name: str
    type: str
    description: str
    required: bool = False
    items: Mapping[str, Any] | None = None
    enum: tuple[str, ...] | None = None
    argument_format: str | None = None


@dataclass(frozen=True)
class Tool:
    """A tool the toolcall dialect offers the model (SWE-agent's tool config)."""

    name: str
    docstring: str = ""
    signature: str | None = None
    arguments: tuple[ToolArgument, ...] = ()


@dataclass(frozen=True)
class ProfileSpec:
    """A profile's checked content (a missing key has the default here)."""

    templates: Mapping[str, str]
    max_observation_length: int | None = None  # None or 0: observations are not clipped
    observation_line_ending: str = "\n"
    exit_code_template: str | None = None  # None: training showed no exit status line
    turn_header: str = ""
    submit_review_messages: tuple[str, ...] = ()
    tools: tuple[Tool, ...] = ()


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _or_null(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _is_list_of_text(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_mapping(value: Any) -> bool:
    return isinstance(value, dict)


# Key -> (check, what it must be). `null` stands for the default where the code always took it so.
FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "name": (_is_text, "a string"),
    "extends": (_or_null(_is_text), "a profile name or the path of a profile file"),
    "max_observation_length": (_or_null(_is_count), "a whole number of characters, or null"),
    "observation_line_ending": (_or_null(_is_text), 'a string such as "\\r\\n", or null'),
    "exit_code_template": (_or_null(_is_text), "a template using {{exit_code}}, or null"),
    "turn_header": (_or_null(_is_text), "a string, or null"),
    "submit_review_messages": (_or_null(_is_list_of_text), "a list of strings, or null"),
    "templates": (_or_null(_is_mapping), "a mapping of template names to template text"),
    "tools": (_or_null(_is_mapping), "a mapping of tool names to their configs"),
}
TOOL_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "docstring": (_or_null(_is_text), "a string"),
    "signature": (_or_null(_is_text), "a string"),
    "arguments": (_or_null(lambda v: isinstance(v, list) and all(isinstance(a, dict) for a in v)),
                  "a list of argument mappings"),
}
ARGUMENT_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "name": (_is_text, "a string"),
    "type": (_is_text, 'a JSON schema type such as "string"'),
    "description": (_is_text, "a string"),
    "required": (lambda v: isinstance(v, bool), "true or false"),
    "items": (_or_null(_is_mapping), "a JSON schema mapping"),
    "enum": (_or_null(_is_list_of_text), "a list of strings"),
    "argument_format": (_or_null(_is_text), "a string"),
}
REQUIRED_ARGUMENT_FIELDS = ("name", "type", "description")


def template_base(key: str) -> str | None:
    """The template `key` stands for (itself, or the one it is the `_<dialect>` variant of)."""
    if key in TEMPLATES:
        return key
    bases = [base for base in TEMPLATES if key.startswith(base + "_") and len(key) > len(base) + 1]
    return max(bases, key=len, default=None)


class Checker:
    """Checks one profile mapping; errors name `source` (the file) and the key's line."""

    def __init__(self, source: str, lines: Mapping[tuple[str, ...], int] | None = None) -> None:
        self.source = source
        self.lines = lines or {}

    def error(self, path: tuple[str, ...], message: str) -> ProfileError:
        line = next((self.lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in self.lines), None)
        where = f"{self.source}:{line}" if line else self.source
        return ProfileError(f"prompt profile {where}: {'.'.join(path)}: {message}")

    def fields(self, data: Mapping[str, Any], fields: Mapping[str, tuple[Callable[[Any], bool], str]],
               path: tuple[str, ...] = ()) -> None:
        for key, value in data.items():
            if key not in fields:
                near = difflib.get_close_matches(str(key), fields, n=1)
                hint = f"did you mean {near[0]!r}? " if near else ""
                raise self.error((*path, str(key)), f"unknown key; {hint}the keys are: {', '.join(fields)}")
            check, expected = fields[key]
            if not check(value):
                raise self.error((*path, key), f"expected {expected}, got {value!r}")

    def template(self, path: tuple[str, ...], source: Any, variables: frozenset[str]) -> None:
        if not isinstance(source, str):
            raise self.error(path, f"expected the template's text, got {source!r}")
        try:
            used = jinja2.meta.find_undeclared_variables(ENV.parse(source))
        except jinja2.TemplateSyntaxError as error:
            raise self.error(path, f"not a valid Jinja2 template: {error} (template line {error.lineno})") from None
        unknown = sorted(used - variables - set(ENV.globals))
        if unknown:
            given = ", ".join(sorted(variables)) or "none"
            raise self.error(path, f"uses {', '.join(unknown)}, which it is never given "
                                   f"(its variables: {given})")

    def check(self, data: Mapping[str, Any]) -> None:
        """Raise ProfileError for the first key that is unknown or of the wrong type."""
        self.fields(data, FIELDS)
        for key, source in (data.get("templates") or {}).items():
            base = template_base(str(key))
            if base is None:
                near = difflib.get_close_matches(str(key), TEMPLATES, n=1)
                hint = f"did you mean {near[0]!r}? " if near else ""
                raise self.error(("templates", str(key)), f"unknown template; {hint}the templates are: "
                                 f"{', '.join(TEMPLATES)} (each may end in _<dialect>)")
            self.template(("templates", key), source, TEMPLATES[base])
        if data.get("exit_code_template") is not None:
            self.template(("exit_code_template",), data["exit_code_template"], EXIT_CODE_VARIABLES)
        for name, tool in (data.get("tools") or {}).items():
            if not isinstance(tool, dict):
                raise self.error(("tools", str(name)), f"expected a tool config mapping, got {tool!r}")
            self.fields(tool, TOOL_FIELDS, ("tools", str(name)))
            for index, argument in enumerate(tool.get("arguments") or []):
                where = ("tools", str(name), "arguments", str(index))
                self.fields(argument, ARGUMENT_FIELDS, where)
                missing = [key for key in REQUIRED_ARGUMENT_FIELDS if key not in argument]
                if missing:
                    raise self.error(where, f"missing {', '.join(missing)}")


def spec_of(data: Mapping[str, Any], source: str) -> ProfileSpec:
    """`data` checked (ProfileError names `source`) and typed."""
    Checker(source).check(data)
    tools = tuple(
        Tool(
            name=str(name),
            docstring=spec.get("docstring") or "",
            signature=spec.get("signature"),
            arguments=tuple(
                ToolArgument(**{**argument, "enum": tuple(argument["enum"]) if argument.get("enum") else None})
                for argument in spec.get("arguments") or []
            ),
        )
        for name, spec in (data.get("tools") or {}).items()
    )
    return ProfileSpec(
        templates=dict(data.get("templates") or {}),
        max_observation_length=data.get("max_observation_length"),
        observation_line_ending=data.get("observation_line_ending") or "\n",
        exit_code_template=data.get("exit_code_template"),
        turn_header=data.get("turn_header") or "",
        submit_review_messages=tuple(data.get("submit_review_messages") or ()),
        tools=tools,
    )


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line (1-based) of each key in a profile file: top-level keys, templates and tools."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return lines
    if not isinstance(root, yaml.MappingNode):
        return lines
    for key, value in root.value:
        lines[(str(key.value),)] = key.start_mark.line + 1
        if isinstance(value, yaml.MappingNode):
            for sub, _ in value.value:
                lines[(str(key.value), str(sub.value))] = sub.start_mark.line + 1
    return lines
