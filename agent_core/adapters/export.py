"""`navtui adapters export`: an adapter merged into its base (peft `merge_and_unload`), saved
with the tokenizer as a plain model directory, and the vLLM line that serves it unmerged.

torch, transformers and peft are imported only when a merge runs (the `local` extra).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from agent_core.adapters.registry import RegistryError, Version


def adapter_rank(adapter: Path) -> int:
    """The LoRA rank in `adapter_config.json` (vLLM's `--max-lora-rank` must be at least it)."""
    try:
        config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RegistryError(f"{adapter}: unreadable adapter_config.json ({error})") from None
    rank = config.get("r")
    if not isinstance(rank, int):
        raise RegistryError(f"{adapter}: adapter_config.json has no rank `r`")
    return rank


def base_of(version: Version) -> str:
    """The base model the adapter is for: its manifest's, else peft's config's."""
    base = version.manifest.get("base")
    if isinstance(base, str) and base:
        return base
    try:
        config = json.loads((version.path / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    base = config.get("base_model_name_or_path")
    if not base:
        raise RegistryError(f"{version.path} names no base model (manifest or adapter_config)")
    return str(base)


def vllm_line(version: Version) -> str:
    """`vllm serve BASE --enable-lora --lora-modules NAME=DIR --max-lora-rank R`."""
    return " ".join([
        "vllm serve", shlex.quote(base_of(version)), "--enable-lora", "--lora-modules",
        shlex.quote(f"{version.name}={version.path}"), "--max-lora-rank",
        str(adapter_rank(version.path)),
    ])


def export_merged(version: Version, out: Path) -> Path:
    """Merge the adapter into its base and save model and tokenizer into `out` (new or empty)."""
    from agent_core.learn.adapter_dir import staged_output

    from agent_core.backends.hf_load import quiet_bitsandbytes

    quiet_bitsandbytes()
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = base_of(version)
    with staged_output(out) as staging:
        model = AutoModelForCausalLM.from_pretrained(base)
        merged = PeftModel.from_pretrained(model, str(version.path)).merge_and_unload()
        merged.save_pretrained(staging)
        source = version.path if (version.path / "tokenizer_config.json").is_file() else base
        AutoTokenizer.from_pretrained(str(source)).save_pretrained(staging)
    return out
