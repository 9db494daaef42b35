"""GPU memory and download size of each preset, computed from the models' real architectures.

Nothing is downloaded and nothing is measured: each base model is built by transformers on the
`meta` device from its published config (the numbers below, from the config.json of
huggingface.co/Qwen/Qwen3-8B and huggingface.co/Qwen/Qwen3-30B-A3B; the parameter totals the
script prints agree with the models' cards: 8.2 B, 6.95 B without embeddings; 30.5 B), and its
parameters are counted by where they live:

* the decoder's `nn.Linear` weights, which bitsandbytes quantizes (`--load-in-8bit`: 1 byte per
  weight + a 4-byte scale per output row; `--load-in-4bit`, nf4 with double quant: 4 bits + an
  8-bit absmax per 64 weights + a 32-bit scale per 256 of those blocks = 4.127 bits);
* everything else, which stays bf16 (2 bytes): embeddings, `lm_head`, norms, and in
  transformers 5.x the MoE experts, stored as fused 3-D parameters that are no `nn.Linear`
  (bitsandbytes issue #1849), so Qwen3-30B-A3B barely shrinks when "quantized".

Added to that: the LoRA adapter in bf16 (rank × (in + out) per adapted projection: every
attention and MLP projection for navigator-8b, as its card says; the r2e card does not list its
target modules, so its figure counts q/k/v/o only), and the KV cache in bf16 at the preset's
window (2 × layers × KV heads × head dim × 2 bytes per token). Not included: the CUDA context
and activations (`bench/gpu_load.py` measures the whole peak). The download is the bf16 safetensors: 2 bytes per parameter.

    python bench/model_memory.py

`bench/gpu_load.py` measures the real peak on a GPU for a Qwen3-8B-shaped model.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NF4_BITS = 4 + 8 / 64 + 32 / (64 * 256)
GB = 1e9


@dataclass(frozen=True)
class Shape:
    preset: str
    config: dict
    lora_rank: int
    lora_targets: tuple[str, ...]


SHAPES = (
    Shape(
        "navigator-8b",
        dict(model_type="qwen3", hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
             num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=151936,
             tie_word_embeddings=False),
        64, ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    ),
    Shape(
        "r2e-30b",
        dict(model_type="qwen3_moe", hidden_size=2048, moe_intermediate_size=768,
             num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
             vocab_size=151936, num_experts=128, num_experts_per_tok=8, tie_word_embeddings=False),
        16, ("q_proj", "k_proj", "v_proj", "o_proj"),
    ),
)


def sizes(shape: Shape, window: int) -> dict[str, float]:
    """Bytes of each part of the preset's model on the GPU, and its parameter counts."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(**shape.config)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    linear = [(name, module) for name, module in model.named_modules()
              if isinstance(module, torch.nn.Linear) and name != "lm_head"]
    quantizable = sum(module.weight.numel() for _, module in linear)
    rows = sum(module.out_features for _, module in linear)
    embeddings = model.get_input_embeddings().weight.numel() + model.lm_head.weight.numel()
    lora = sum(shape.lora_rank * (module.in_features + module.out_features)
               for name, module in linear if name.rsplit(".", 1)[-1] in shape.lora_targets)
    fused = sum(p.numel() for p in model.parameters() if p.dim() == 3)  # MoE experts
    kv_per_token = 2 * config.num_hidden_layers * config.num_key_value_heads * config.head_dim * 2
    rest = 2 * (total - quantizable)
    return {
        "params": total,
        "non_embedding": total - embeddings,
        "bf16": 2 * total,
        "8bit": quantizable + 4 * rows + rest,
        "4bit": quantizable * NF4_BITS / 8 + rest,
        "fused": fused,
        "8bit_all": quantizable + fused + 4 * rows + 2 * (total - quantizable - fused),
        "4bit_all": (quantizable + fused) * NF4_BITS / 8 + 2 * (total - quantizable - fused),
        "lora": 2 * lora,
        "kv": kv_per_token * window,
        "kv_per_token": kv_per_token,
    }


def main() -> int:
    from agent_core.backends.presets import PRESETS

    print("preset       | params  | download (bf16) | LoRA    | KV at window      | bf16    | 8-bit   | 4-bit")
    for shape in SHAPES:
        preset = PRESETS[shape.preset]
        s = sizes(shape, preset.context_window)
        extra = s["lora"] + s["kv"]
        print(
            f"{shape.preset:<12} | {s['params'] / 1e9:5.2f} B | {s['bf16'] / GB:5.1f} GB         |"
            f" {s['lora'] / GB:.2f} GB | {s['kv'] / GB:.2f} GB at {preset.context_window:>6,} |"
            f" {(s['bf16'] + extra) / GB:5.1f} GB | {(s['8bit'] + extra) / GB:5.1f} GB |"
            f" {(s['4bit'] + extra) / GB:5.1f} GB"
        )
        print(f"{'':12}   {s['non_embedding'] / 1e9:.2f} B without embeddings;"
              f" LoRA r{shape.lora_rank} {s['lora'] / 2 / 1e6:.1f} M parameters on"
              f" {'/'.join(t.removesuffix('_proj') for t in shape.lora_targets)};"
              f" KV {s['kv_per_token']:,} bytes per token")
        if s["fused"]:
            print(f"{'':12}   {s['fused'] / 1e9:.2f} B in fused MoE experts, kept bf16; were they"
                  f" quantized too: 8-bit {(s['8bit_all'] + extra) / GB:.1f} GB,"
                  f" 4-bit {(s['4bit_all'] + extra) / GB:.1f} GB")
    print("bf16 / 8-bit / 4-bit: weights + LoRA + KV cache; add the CUDA context and activations.")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.dont_write_bytecode = True
    raise SystemExit(main())
