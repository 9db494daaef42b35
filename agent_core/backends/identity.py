"""Who answered a turn: the identity of model, adapter, tokenizer and chat template, for the log.

A training row is only as good as the knowledge of what produced it, so each backend says what it
runs (`Backend.identity()`, optional): a Hub id with the revision it resolved to, or a local path;
the SHA-256 of the adapter's weights and of the chat template; the generation settings. The
session logs it with the first prompt of a process (`agent_core.prompt_log`).

An adapter made by `navtui finetune` carries `navtui-adapter.json` (`ADAPTER_MANIFEST`); its
`version` and `base` are part of the adapter's identity and of its label in the status bar.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from agent_core.prompt_types import text_sha256

ADAPTER_MANIFEST = "navtui-adapter.json"
ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
_SNAPSHOT = re.compile(r"/snapshots/([0-9a-f]{40})(?:/|$)")
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def revision_of(resolved: str) -> str | None:
    """The commit a Hub snapshot folder holds (`.../snapshots/<sha>`), else None."""
    match = _SNAPSHOT.search(Path(resolved).as_posix())
    return match.group(1) if match else None


def read_manifest(adapter: str | Path | None) -> dict[str, Any] | None:
    """The `navtui-adapter.json` of a local adapter directory, if it has a readable one."""
    if adapter is None:
        return None
    path = Path(adapter).expanduser() / ADAPTER_MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def weights_identity(ref: str, resolved: str) -> dict[str, Any]:
    """`ref` as given, the folder it resolved to, and the Hub revision when that is a snapshot."""
    return {"ref": ref, "path": resolved, "revision": revision_of(resolved)}


def adapter_identity(ref: str, resolved: str) -> dict[str, Any]:
    """An adapter's identity: where it is, the SHA-256 of its weights, its navtui manifest."""
    found = weights_identity(ref, resolved)
    folder = Path(resolved).expanduser()
    for name in ADAPTER_WEIGHTS:
        if (folder / name).is_file():
            found["weights_sha256"] = file_sha256(folder / name)
            break
    manifest = read_manifest(folder)
    if manifest is not None:
        found["version"] = manifest.get("version")
        found["base"] = manifest.get("base")
        found["method"] = manifest.get("method")
    return found


def tokenizer_identity(tokenizer: Any) -> dict[str, Any]:
    """The tokenizer's source and the SHA-256 of its chat template (None: it has none)."""
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # several named templates: the default one is used
        template = template.get("default")
    return {
        "name_or_path": getattr(tokenizer, "name_or_path", None),
        "chat_template_sha256": text_sha256(template) if isinstance(template, str) else None,
    }


def adapter_label(adapter: str, name: str) -> str:
    """`name`, plus ` v<version>` when the adapter's manifest gives one."""
    manifest = read_manifest(adapter)
    version = manifest.get("version") if manifest else None
    return f"{name} v{version}" if version is not None else name
