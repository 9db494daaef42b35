"""Where `navtui finetune` writes: an adapter directory made whole or not at all.

The output must not exist or be an empty directory; training writes into a temporary directory
beside it (`.<name>.navtui-tmp-<pid>`) that is renamed onto the output at the very end, so an
error or Ctrl-C leaves nothing behind and a second run never touches a finished adapter.
The directory then holds the adapter (`adapter_config.json`, `adapter_model.safetensors`) and
its manifest, `navtui-adapter.json` (`MANIFEST_KEYS`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_core.backends.identity import ADAPTER_MANIFEST, read_manifest

MANIFEST_KEYS = (
    "base", "parent", "method", "sessions", "rows", "data_sha256", "hyperparameters",
    "versions", "metrics",
)


class OutputError(Exception):
    """The output directory cannot be used; the message says what to do."""


def check_output(out: Path) -> None:
    """Refuse an output that exists and is not an empty directory."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise OutputError(f"{out} exists and is not a directory: choose a new --out DIR")
    if out.is_dir() and any(out.iterdir()):
        raise OutputError(
            f"{out} is not empty (a finished adapter?): choose a new --out DIR, or remove it first"
        )
    if not out.parent.is_dir():
        raise OutputError(f"{out.parent} does not exist: create it, or choose another --out DIR")


@contextmanager
def staged_output(out: Path, *, keep: bool = True) -> Iterator[Path]:
    """A temporary directory beside `out`, renamed onto it when the block ends normally and
    removed otherwise (KeyboardInterrupt included). `keep=False` (a secondary process of a
    multi-GPU run) always removes it: only the main process writes `out`."""
    check_output(out)
    temp = out.parent / f".{out.name}.navtui-tmp-{os.getpid()}"
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    try:
        yield temp
        if keep:
            check_output(out)
            os.replace(temp, out)  # rename(2): also onto an empty directory
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        raise ValueError(f"manifest lacks {missing}")
    text = json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n"
    (folder / ADAPTER_MANIFEST).write_text(text, encoding="utf-8")


def next_version(parent: str | None) -> int:
    """1 for a new adapter; the parent's version + 1 when continuing a navtui-made one."""
    manifest = read_manifest(parent)
    version = manifest.get("version") if manifest else None
    return version + 1 if isinstance(version, int) else 1
