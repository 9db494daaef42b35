"""The README's "Run a real model" figures are the ones bench/model_memory.py computes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from agent_core.backends.presets import PRESETS

ROOT = Path(__file__).resolve().parent.parent


def model_memory():
    spec = importlib.util.spec_from_file_location("model_memory", ROOT / "bench" / "model_memory.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_readme_table_gives_the_computed_download_and_memory():
    bench = model_memory()
    readme = (ROOT / "README.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line for line in readme.splitlines()
            if line.startswith("| `") and "GB" in line}
    for shape in bench.SHAPES:
        preset = PRESETS[shape.preset]
        s = bench.sizes(shape, preset.context_window)
        extra = s["lora"] + s["kv"]
        gb = [f"{(s[mode] + extra) / 1e9:.1f}" for mode in ("bf16", "8bit", "4bit")]
        row = rows[shape.preset]
        assert f"{s['bf16'] / 1e9:.1f} GB" in row
        assert f"| {' / '.join(gb)} GB |" in row
        assert f"{preset.context_window:,} tokens" in row
    navigator = bench.sizes(bench.SHAPES[0], PRESETS["navigator-8b"].context_window)
    assert f"{navigator['lora'] / 2 / 1e6:.1f} M LoRA" in readme
    assert f"≈ {navigator['lora'] / 1e9:.2f} GB" in rows["navigator-8b"]
