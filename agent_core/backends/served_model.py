"""Which served model navtui talks to: `/v1/models` read once, the name to send per family.

Servers name a LoRA adapter differently:

    vLLM       `--lora-modules NAME=PATH` lists NAME with `parent` = the base and `root` = PATH;
               requests select it as `model: NAME`.
    SGLang     `--lora-paths NAME=PATH` lists NAME with `parent` = the base; requests select it
               only as `model: "BASE:NAME"` (a bare NAME, or any unknown name, runs the base).
    llama.cpp  serves one model (`owned_by: llamacpp`), whatever the request names; `--lora`
               applies the adapter to every request.
    Ollama     lists `NAME:TAG` (`owned_by: library` or the namespace); `NAME` means `NAME:latest`.
    transformers serve: lists the models it has cached and loads the one a request names; pinned
               to one (`transformers serve MODEL`) it lists that one alone, with a `status`,
               and answers every request with it.

`resolve_served(listing, requested, preset)` picks the entry and the name to send, says in a
notice which served model that is, and reads the context window the entry states (vLLM's and
SGLang's `max_model_len`, llama.cpp's `meta.n_ctx` where a build lists it). When the server cannot be listed navtui sends the requested
name unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_core.backends.base import BackendError
from agent_core.backends.presets import Preset

FAMILIES = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp", "ollama": "Ollama",
            "transformers": "transformers serve"}
# Families that answer every request with their one model, whatever it names.
SINGLE_MODEL = frozenset({"llamacpp", "transformers"})


@dataclass
class ServedModel:
    """The name to put in requests, the server family, and what to tell the user."""

    name: str
    family: str = ""  # a FAMILIES key, or "" (unknown)
    notices: list[str] = field(default_factory=list)
    window: int | None = None  # the context window the listing states for it


def listed_window(entry: dict[str, Any] | None) -> int | None:
    """The context window a listing's entry states (`max_model_len`, or llama.cpp's
    `meta.n_ctx`)."""
    if not entry:
        return None
    found = entry.get("meta")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    for value in (entry.get("max_model_len"), meta.get("n_ctx")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def family_of(entries: list[dict[str, Any]]) -> str:
    """The server family, from its `/v1/models` entries' `owned_by`."""
    owners = {str(e.get("owned_by", "")).lower() for e in entries}
    for owner in ("sglang", "vllm", "llamacpp"):
        if owner in owners:
            return owner
    if any(":" in str(e.get("id", "")) for e in entries) and "library" in owners:
        return "ollama"
    if all(isinstance(e.get("status"), dict) for e in entries):
        return "transformers"
    return ""


def resolve_served(listing: dict[str, Any], requested: str, preset: Preset | None) -> ServedModel:
    """See the module docstring. BackendError when SGLang would silently run the base model."""
    entries = [e for e in listing.get("data") or [] if isinstance(e, dict) and e.get("id")]
    if not entries:
        return ServedModel(requested)
    family = family_of(entries)
    entry = _find(entries, requested, preset, family)
    where = FAMILIES.get(family, "the server")
    served = ", ".join(str(e["id"]) for e in entries)
    if entry is None:
        if family == "sglang":
            raise BackendError(
                f"SGLang serves no model or adapter named {requested!r} (it serves: {served}) "
                "and would answer with the base model; start it with "
                "`python -m sglang.launch_server ... --enable-lora --lora-paths NAME=ADAPTER_DIR`"
                f" where NAME is {requested} (see docs/servers.md)"
            )
        return ServedModel(requested, family, [
            f"{where} does not list {requested!r} among its models ({served}); sending it anyway"
        ], listed_window(entries[0]) if len(entries) == 1 else None)
    name = str(entry["id"])
    parent = entry.get("parent")
    if family == "sglang" and parent:
        name = f"{parent}:{entry['id']}"
    if parent:
        said = f"adapter {entry['id']!r} on {parent}"
    elif family == "llamacpp":
        said = f"{name!r} (llama.cpp applies its `llama-server --lora` adapters to every request)"
    elif family == "transformers" and len(entries) == 1:
        said = f"{name!r} (the one model it was started with)"
    else:
        said = repr(name)
    notice = f"talking to {where} at its model {said}; requests name {name!r}"
    return ServedModel(name, family, [notice], listed_window(entry))


def _find(entries: list[dict[str, Any]], requested: str, preset: Preset | None,
          family: str) -> dict[str, Any] | None:
    """The entry `requested` means: its id (Ollama: id without `:latest`), else for a preset
    the entry whose id or root is the preset's adapter, else the only model of a family that
    answers every request with it."""
    by_id = {str(e["id"]): e for e in entries}
    wanted = requested.split(":", 1)[1] if family == "sglang" and ":" in requested else requested
    for name in (wanted, f"{wanted}:latest"):
        if name in by_id:
            return by_id[name]
    if preset is not None:
        for entry in entries:
            if preset.adapter in (str(entry["id"]), str(entry.get("root", ""))) or str(
                entry.get("root", "")
            ).rstrip("/").endswith(preset.adapter.split("/")[-1]):
                return entry
    if family in SINGLE_MODEL and len(entries) == 1:
        return entries[0]
    return None


def complete_tools(tools: list[dict[str, Any]], accepted: dict[str, str]) -> list[dict[str, Any]]:
    """`tools` plus a schema for every name navtui accepts that it lacks (`accepted` maps a
    name to the tool it means, e.g. `finish` -> `submit`), copied from that tool's schema.

    SGLang drops a tool call whose name is not in the request's `tools`; with every accepted
    name listed, a model that writes `finish` still reaches navtui's parser.
    """
    by_name = {str((t.get("function") or {}).get("name")): t for t in tools}
    extra = []
    for name, kind in accepted.items():
        if name in by_name or kind not in by_name:
            continue
        schema = by_name[kind]
        extra.append(schema | {"function": {**schema["function"], "name": name}})
    return tools + extra
