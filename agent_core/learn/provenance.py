"""What an adapter was made from, for its manifest, and who may print and write while training.

`hashes`: the base model (its Hub revision, or the SHA-256 of its local config and weights), the
parent adapter's weights, the tokenizer (its vocabulary and special tokens) and its chat
template, so a manifest names exactly what it was trained on. `model_mismatches` names sessions
that ran with another model than the one trained. `is_main_process` is False in the secondary
processes of a `torchrun` / `accelerate launch` run: only the main one prints and writes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent_core.backends.identity import adapter_identity, file_sha256, revision_of
from agent_core.backends.identity import tokenizer_identity
from agent_core.learn.history import ModelTurn

WEIGHT_SUFFIXES = (".safetensors", ".bin")


def is_main_process() -> bool:
    """True unless this is a secondary rank of a distributed launch (`RANK`, set by torchrun
    and accelerate for every process; `LOCAL_RANK` where only that is set)."""
    for name in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(name)
        if value is not None and value.strip().lstrip("-").isdigit():
            return int(value) <= 0
    return True


def navtui_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("navtui")
    except PackageNotFoundError:
        from agent_core import __version__

        return __version__


def base_sha256(ref: str) -> dict[str, Any]:
    """A local base: the SHA-256 of its config and weight files together; a Hub id: the
    revision its cached snapshot resolves to."""
    folder = Path(ref).expanduser()
    if folder.is_dir():
        digest = hashlib.sha256()
        files = sorted(p for p in folder.iterdir()
                       if p.name == "config.json" or p.suffix in WEIGHT_SUFFIXES)
        for path in files:
            digest.update(f"{path.name}\0{file_sha256(path)}\0".encode())
        return {"ref": ref, "sha256": digest.hexdigest(), "files": [p.name for p in files]}
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(ref, "config.json")
    except (ImportError, ValueError):
        cached = None
    return {"ref": ref, "revision": revision_of(cached) if isinstance(cached, str) else None}


def tokenizer_sha256(tokenizer: Any) -> str:
    """The SHA-256 of the tokenizer's vocabulary and special tokens."""
    data = {"vocab": sorted(tokenizer.get_vocab().items()),
            "special": tokenizer.special_tokens_map}
    return hashlib.sha256(json.dumps(data, default=str).encode()).hexdigest()


def hashes(base: str, parent: str | None, tokenizer: Any) -> dict[str, Any]:
    return {
        "base": base_sha256(base),
        "parent": adapter_identity(parent, parent) if parent else None,
        "tokenizer_sha256": tokenizer_sha256(tokenizer),
        "chat_template_sha256": tokenizer_identity(tokenizer)["chat_template_sha256"],
    }


def _same_model(model: str, logged: dict[str, Any]) -> bool:
    names = {str(logged.get(key)) for key in ("ref", "path") if logged.get(key)}
    if model in names:
        return True
    mine = Path(model).expanduser()
    return mine.exists() and any(Path(n).expanduser().resolve() == mine.resolve() for n in names)


def model_mismatches(model: str, turns: Iterable[ModelTurn]) -> list[str]:
    """A warning per model, other than `model`, that logged sessions ran with."""
    others: dict[str, list[str]] = {}
    for turn in turns:
        logged = turn.identity.get("model") or {}
        if logged.get("ref") and not _same_model(model, logged):
            sessions = others.setdefault(str(logged["ref"]), [])
            if turn.session not in sessions:
                sessions.append(turn.session)
    return [
        f"--model {model} is not the model session{'s' if len(ids) > 1 else ''} "
        f"{', '.join(ids)} ran with ({ref}): the rows are that model's replies and prompts, "
        "trained into an adapter for another one"
        for ref, ids in others.items()
    ]
