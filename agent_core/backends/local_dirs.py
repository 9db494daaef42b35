"""Local folders named by `--model`, `--adapter` or `--tokenizer`: checked for the files each
kind needs before anything loads, so a wrong folder fails in a moment with one line instead of
after seconds of loading with a library's traceback."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.backends.base import BackendError

# The file each kind cannot do without, and the weights it must hold (none for a tokenizer).
MARKERS = {"model": ("config.json",), "adapter": ("adapter_config.json",),
           "tokenizer": ("tokenizer_config.json", "tokenizer.json")}
WEIGHTS = (".safetensors", ".bin", ".pt", ".pth")
FROM_HUB = "`hf download ID --local-dir DIR` or `save_pretrained(DIR)`"


def looks_like_path(ref: str) -> bool:
    """A reference that can only be a local path (a Hub id is `name` or `owner/name`)."""
    return ref.startswith(("/", ".", "~")) or ref.count("/") > 1


def check_local(flag: str, ref: str | None, kind: str) -> None:
    """BackendError naming the fix when `ref` is a local path that cannot hold a `kind`
    (model, adapter or tokenizer); a Hub id (no such path here) passes."""
    if not ref:
        return
    path = Path(ref).expanduser()
    if not path.exists():
        if looks_like_path(ref):
            raise BackendError(f"{flag} {ref}: no such file or directory; check the path")
        return
    if not path.is_dir():
        gguf = (" (a GGUF file runs in llama.cpp's server: `--backend openai`, see "
                "docs/servers.md)") if path.suffix.lower() == ".gguf" else ""
        raise BackendError(f"{flag} {ref} is a file; give the folder that holds its "
                           f"{MARKERS[kind][0]}{gguf}")
    if not any((path / name).is_file() for name in MARKERS[kind]):
        raise BackendError(f"{flag} {ref} holds no {kind} (no {MARKERS[kind][0]}): give a "
                           f"folder made by {FROM_HUB}, or a Hugging Face id")
    if kind == "model":
        _check_model_config(flag, ref, path / "config.json")
    if kind != "tokenizer" and not any(
        item.suffix in WEIGHTS for item in path.iterdir() if item.is_file()
    ):
        raise BackendError(f"{flag} {ref} has {MARKERS[kind][0]} but no weights (*.safetensors "
                           f"or *.bin): the download is incomplete; fetch it again with {FROM_HUB}")


def _check_model_config(flag: str, ref: str, config: Path) -> None:
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BackendError(f"{flag} {ref}: config.json cannot be read ({error}); fetch the "
                           f"model again with {FROM_HUB}") from None
    if not isinstance(data, dict) or not data.get("model_type"):
        raise BackendError(f"{flag} {ref}: config.json names no model_type, so transformers "
                           "cannot tell which model it is; fetch the model again with "
                           f"{FROM_HUB}")
