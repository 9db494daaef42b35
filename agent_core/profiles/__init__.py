"""Prompt profiles: the words each model reads, kept as data (one YAML file per profile).

A profile holds Jinja2 templates (system, instance, observation envelopes, clipping note, review
on submit, navtui's own messages), the tool definitions the toolcall dialect sends, and a few
numbers. The packaged ones live beside this module: `swesmith` (SWE-smith's loop: navigator-8b
and the xml models), `r2e-card` (the R2E-Gym SFT model's card) and `card` (the cards' usage
examples). `load_profile(NAME | PATH)` reads one; a file may say `extends: NAME` and override
only some keys. Each file notes where its training text comes from and under which license.

Templates are looked up per dialect first: `instance_template_text` wins over
`instance_template` when the text dialect asks. Each file is checked against the profile's shape
as it is read (`agent_core.profiles.schema`): a misspelt key or a wrong type fails at load, with
the file, line and key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

from agent_core.profiles.schema import (
    ENV,
    Checker,
    ProfileError,
    ProfileSpec,
    Tool,
    key_lines,
    spec_of,
    template_base,
)
from agent_core.user_files import read_user_text

HERE = Path(__file__).resolve().parent
PROFILES = tuple(sorted(p.stem for p in HERE.glob("*.yaml")))

__all__ = ["PROFILES", "Profile", "ProfileError", "function_tool", "load_profile", "logged_profile"]


def logged_profile(value: object) -> str | None:
    """The prompt profile a session log names, as one to load: a packaged profile's name only.
    A log is data (it may be shared, or edited by someone else): a file it names is never read,
    and the dialect's default profile stands in (None)."""
    return value if isinstance(value, str) and value in PROFILES else None


@dataclass(frozen=True)
class Profile:
    """One prompt profile, merged with the profile it extends; `data` is the merged mapping as
    read (its digest is logged), `spec` the same checked and typed."""

    name: str
    data: dict[str, Any]
    spec: ProfileSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", spec_of(self.data, repr(self.name)))

    def render(self, key: str, dialect: str | None = None, **values: Any) -> str:
        """Template `key` (its `_<dialect>` variant first) rendered with `values`."""
        templates = self.spec.templates
        source = templates.get(f"{key}_{dialect}", templates.get(key))
        if source is None:
            raise ProfileError(f"prompt profile {self.name!r} has no template {key!r}")
        try:
            return _compiled(source).render(**values)
        except jinja2.TemplateError as error:
            raise ProfileError(f"prompt profile {self.name!r}, template {key!r}: {error}") from None

    def has_template(self, key: str, dialect: str | None = None) -> bool:
        return f"{key}_{dialect}" in self.spec.templates or key in self.spec.templates

    @cached_property
    def dialect_variants(self) -> frozenset[str]:
        """The dialects its `<template>_<dialect>` keys name."""
        variants = set()
        for key in self.spec.templates:
            base = template_base(key)
            if base is not None and base != key:
                variants.add(key[len(base) + 1:])
        return frozenset(variants)

    @property
    def max_observation_length(self) -> int | None:
        return self.spec.max_observation_length

    @property
    def line_ending(self) -> str:
        return self.spec.observation_line_ending

    def exit_code_line(self, code: int) -> str | None:
        """The line that shows a non-zero exit status, or None where training showed none."""
        source = self.spec.exit_code_template
        return _compiled(source).render(exit_code=code) if source else None

    @property
    def turn_header(self) -> str:
        return self.spec.turn_header

    @property
    def submit_review_messages(self) -> list[str]:
        return list(self.spec.submit_review_messages)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function-calling schemas, built the way SWE-agent builds them."""
        return [function_tool(tool) for tool in self.spec.tools]


@lru_cache(maxsize=64)
def _compiled(source: str) -> jinja2.Template:
    return ENV.from_string(source)


def function_tool(tool: Tool) -> dict[str, Any]:
    """A SWE-agent tool config as a function schema: each property holds type, description,
    then items and enum when given; `required` lists the required arguments in order."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg in tool.arguments:
        prop: dict[str, Any] = {"type": arg.type, "description": arg.description}
        if arg.items:
            prop["items"] = dict(arg.items)
        if arg.required:
            required.append(arg.name)
        if arg.enum:
            prop["enum"] = list(arg.enum)
        properties[arg.name] = prop
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.docstring,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


# libyaml's loader where PyYAML was built with it (the same documents, several times faster).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> dict[str, Any]:
    """The file's own mapping, checked against the profile's shape (ProfileError names the file,
    line and key)."""
    text = read_user_text(path, f"prompt profile {path}", ProfileError)
    try:
        data = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as error:
        raise ProfileError(f"cannot read prompt profile {path}: {error}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"prompt profile {path} is not a YAML mapping")
    Checker(str(path), key_lines(text)).check(data)
    return data


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **override}
    merged["templates"] = {**(base.get("templates") or {}), **(override.get("templates") or {})}
    merged.pop("extends", None)
    return merged


def _locate(spec: str) -> Path:
    if spec in PROFILES:
        return HERE / f"{spec}.yaml"
    path = Path(spec).expanduser()
    if path.is_dir():
        path = path / "profile.yaml"
    if path.is_file():
        return path
    raise ProfileError(
        f"unknown prompt profile {spec!r}: give one of {', '.join(PROFILES)}, or the path of a "
        "profile YAML file (or of a directory holding profile.yaml)"
    )


@lru_cache(maxsize=32)
def load_profile(spec: str, _seen: tuple[str, ...] = ()) -> Profile:
    """The profile named `spec` (packaged) or stored at path `spec`; ProfileError if neither."""
    path = _locate(spec)
    own = _read(path)
    name = str(own.get("name") or path.stem)
    data = own
    parent = own.get("extends")
    if parent is not None:
        if str(parent) in _seen or str(parent) == spec:
            raise ProfileError(f"prompt profile {spec!r} extends itself (via {parent!r})")
        data = _merge(load_profile(str(parent), (*_seen, spec)).data, own)
    return Profile(name=name, data={**data, "name": name})
