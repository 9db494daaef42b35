"""The tiny test models: real Qwen vocabulary and ids, Qwen3 prompt format, a scripted reply."""

from __future__ import annotations

import json

import pytest

from tests.tiny_model import (
    SCRIPTED_MESSAGES,
    SCRIPTED_REPLY,
    SCRIPTED_THINKING_REPLY,
    qwen_tiktoken_path,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module")
def tokenizer(tiny_tokenizer_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_tokenizer_dir)


def test_special_tokens_have_qwen3_ids(tokenizer):
    expected = {
        "<|endoftext|>": 151643,
        "<|im_start|>": 151644,
        "<|im_end|>": 151645,
        "<tool_call>": 151657,
        "</tool_call>": 151658,
        "<tool_response>": 151665,
        "</tool_response>": 151666,
        "<think>": 151667,
        "</think>": 151668,
    }
    assert {token: tokenizer.convert_tokens_to_ids(token) for token in expected} == expected
    assert len(tokenizer) == 151669
    assert tokenizer.eos_token_id == 151645
    assert tokenizer.encode("<tool_call>", add_special_tokens=False) == [151657]


def test_vocabulary_matches_tiktoken_ranks(tokenizer):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from tests.tiny_model import QWEN_PATTERN

    ranks = load_tiktoken_bpe(str(qwen_tiktoken_path()))
    reference = tiktoken.Encoding("qwen", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens={})
    text = "def add(a, b):\n    return a + b  # 12345 héllo 世界 🙂\n\n\tdone.\r\n"
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert ids == reference.encode(text)
    assert tokenizer.decode(ids) == text


def test_tool_markers_survive_skip_special_tokens(tokenizer):
    ids = tokenizer.encode("<think>x</think><tool_call>y</tool_call><|im_end|>", add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=True) == "<think>x</think><tool_call>y</tool_call>"


def test_chat_template_thinking_switch(tokenizer):
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    on = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    off = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    prefix = "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert on == prefix
    assert off == prefix + "<think>\n\n</think>\n\n"


def test_chat_template_tools_calls_and_responses(tokenizer):
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}
            ],
        },
        {"role": "tool", "content": "a.py"},
        {"role": "tool", "content": "b.py"},
    ]
    text = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nsys\n\n# Tools\n")
    assert "<tools>\n" + json.dumps(TOOLS[0]) + "\n</tools>" in text
    assert (
        '<|im_start|>assistant\nLooking.\n<tool_call>\n{"name": "bash", '
        '"arguments": {"command": "ls"}}\n</tool_call><|im_end|>\n'
    ) in text
    assert text.endswith(
        "<|im_start|>user\n<tool_response>\na.py\n</tool_response>\n<tool_response>\nb.py\n"
        "</tool_response><|im_end|>\n<|im_start|>assistant\n"
    )


def test_chat_template_drops_old_thinking(tokenizer):
    messages = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "<think>\nold\n</think>\n\nfirst"},
        {"role": "user", "content": "two"},
    ]
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    assert "old" not in text
    assert "<|im_start|>assistant\nfirst<|im_end|>\n" in text


def test_tiny_model_and_adapter_load(tiny_model_dir, tiny_adapter_dir):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert base.config.model_type == "qwen3" and base.config.vocab_size == 151936
    ids = torch.tensor([[151644, 872, 198]])
    before = base(ids).logits
    model = PeftModel.from_pretrained(base, tiny_adapter_dir)
    after = model(ids).logits
    assert not torch.allclose(before, after)


@pytest.mark.parametrize("thinking", [False, True])
def test_scripted_model_replies_with_its_tool_call(scripted_model_dir, thinking):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(scripted_model_dir)
    model = AutoModelForCausalLM.from_pretrained(scripted_model_dir)
    ids = tokenizer.apply_chat_template(
        SCRIPTED_MESSAGES,
        add_generation_prompt=True,
        enable_thinking=thinking,
        return_tensors="pt",
        return_dict=True,
    )["input_ids"]
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=60, do_sample=False)
    expected = SCRIPTED_THINKING_REPLY if thinking else SCRIPTED_REPLY
    assert tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True) == expected
    assert out[0, -1].item() == tokenizer.eos_token_id
