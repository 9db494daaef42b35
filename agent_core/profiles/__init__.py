"""Prompt profiles: the words each model reads, kept as data (one YAML file per profile).

A profile holds Jinja2 templates (system, instance, observation envelopes, clipping note, review
on submit, navtui's own messages), the tool definitions the toolcall dialect sends, and a few
numbers. The packaged ones live beside this module: `swesmith` (SWE-smith's loop: navigator-8b
and the xml models), `r2e-card` (the R2E-Gym SFT model's card) and `card` (the cards' usage
examples). `load_profile(NAME | PATH)` reads one; a file may say `extends: NAME` and override
only some keys. Each file notes where its training text comes from and under which license.

Templates are looked up per dialect first: `instance_template_text` wins over
`instance_template` when the text dialect asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

HERE = Path(__file__).resolve().parent
PROFILES = tuple(sorted(p.stem for p in HERE.glob("*.yaml")))
# Jinja2 with its defaults, as SWE-agent renders its templates (a template's single trailing
# newline is dropped), but failing loudly on a missing variable.
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


class ProfileError(Exception):
    """A profile that cannot be found or read; the message names the fix."""


@dataclass(frozen=True)
class Profile:
    """One prompt profile, merged with the profile it extends."""

    name: str
    data: dict[str, Any]

    def render(self, key: str, dialect: str | None = None, **values: Any) -> str:
        """Template `key` (its `_<dialect>` variant first) rendered with `values`."""
        templates = self.data.get("templates") or {}
        source = templates.get(f"{key}_{dialect}", templates.get(key))
        if source is None:
            raise ProfileError(f"prompt profile {self.name!r} has no template {key!r}")
        try:
            return _compiled(source).render(**values)
        except jinja2.TemplateError as error:
            raise ProfileError(f"prompt profile {self.name!r}, template {key!r}: {error}") from None

    @property
    def max_observation_length(self) -> int | None:
        return self.data.get("max_observation_length")

    @property
    def line_ending(self) -> str:
        return self.data.get("observation_line_ending") or "\n"

    def exit_code_line(self, code: int) -> str | None:
        """The line that shows a non-zero exit status, or None where training showed none."""
        source = self.data.get("exit_code_template")
        return _compiled(source).render(exit_code=code) if source else None

    @property
    def turn_header(self) -> str:
        return self.data.get("turn_header") or ""

    @property
    def submit_review_messages(self) -> list[str]:
        return list(self.data.get("submit_review_messages") or [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools as OpenAI function-calling schemas, built the way SWE-agent builds them."""
        return [function_tool(name, spec) for name, spec in (self.data.get("tools") or {}).items()]


@lru_cache(maxsize=64)
def _compiled(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def function_tool(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A SWE-agent tool config as a function schema: each property holds type, description,
    then items and enum when given; `required` lists the required arguments in order."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg in spec.get("arguments") or []:
        prop: dict[str, Any] = {"type": arg["type"], "description": arg["description"]}
        if arg.get("items"):
            prop["items"] = arg["items"]
        if arg.get("required"):
            required.append(arg["name"])
        if arg.get("enum"):
            prop["enum"] = arg["enum"]
        properties[arg["name"]] = prop
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": spec.get("docstring") or "",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ProfileError(f"cannot read prompt profile {path}: {error}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"prompt profile {path} is not a YAML mapping")
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
