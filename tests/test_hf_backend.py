"""The hf backend on real tiny Qwen3 models: LoRA, merge, 4-bit on CPU, streaming, stops, cancel, thinking."""

from __future__ import annotations

import threading
import time

import pytest

from agent_core.backends.base import Backend, BackendError, Prompt
from agent_core.backends.hf import HFBackend
from tests.tiny_model import (
    SCRIPTED_MESSAGES,
    SCRIPTED_REPLY,
    SCRIPTED_THINKING_REPLY,
    SCRIPTED_THOUGHT,
)

CODE_PROMPT = Prompt(text="def main():\n    return", max_new_tokens=24)


def run(backend: HFBackend, prompt: Prompt) -> list[str]:
    return list(backend.stream(prompt))


@pytest.fixture(scope="module")
def base(tiny_model_dir):
    backend = HFBackend(str(tiny_model_dir))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def with_lora(tiny_model_dir, tiny_adapter_dir):
    backend = HFBackend(str(tiny_model_dir), adapter=str(tiny_adapter_dir))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def scripted(scripted_model_dir):
    backend = HFBackend(str(scripted_model_dir), enable_thinking=False)
    yield backend
    backend.close()


def test_base_plus_lora_streams_in_chunks(with_lora, base):
    from peft import PeftModel

    assert isinstance(with_lora, Backend)
    assert isinstance(with_lora.model, PeftModel)
    chunks = run(with_lora, CODE_PROMPT)
    assert len(chunks) > 1
    usage = with_lora.last_usage
    assert usage.new_tokens == CODE_PROMPT.max_new_tokens
    assert usage.prompt_tokens == len(with_lora.tokenizer.encode(CODE_PROMPT.text))
    assert usage.time_to_first_token > 0 and usage.tokens_per_second > 0
    assert "".join(chunks) != "".join(run(base, CODE_PROMPT)), "the adapter should change the output"


def test_merged_adapter_gives_the_same_text(tiny_model_dir, tiny_adapter_dir, with_lora):
    from peft import PeftModel

    merged = HFBackend(str(tiny_model_dir), adapter=str(tiny_adapter_dir), merge_adapter=True)
    try:
        assert not isinstance(merged.model, PeftModel)
        assert "".join(run(merged, CODE_PROMPT)) == "".join(run(with_lora, CODE_PROMPT))
    finally:
        merged.close()


def test_4bit_on_cpu_with_adapter(tiny_model_dir, tiny_adapter_dir):
    import bitsandbytes as bnb

    backend = HFBackend(str(tiny_model_dir), adapter=str(tiny_adapter_dir), load_in_4bit=True)
    try:
        quantized = [m for m in backend.model.modules() if isinstance(m, bnb.nn.Linear4bit)]
        assert quantized, "no layer was quantized"
        assert all(m.weight.quant_type == "nf4" for m in quantized)
        chunks = run(backend, CODE_PROMPT)
        assert len(chunks) > 1
        assert backend.last_usage.new_tokens == CODE_PROMPT.max_new_tokens
    finally:
        backend.close()


def test_8bit_on_cpu(tiny_model_dir):
    import bitsandbytes as bnb

    backend = HFBackend(str(tiny_model_dir), load_in_8bit=True)
    try:
        assert any(isinstance(m, bnb.nn.Linear8bitLt) for m in backend.model.modules())
        assert len(run(backend, CODE_PROMPT)) > 1
    finally:
        backend.close()


def test_cancel_from_another_thread_stops_promptly(base):
    long_turn = Prompt(text="Once upon a time", max_new_tokens=4000)
    received: list[str] = []
    started = time.perf_counter()
    for chunk in base.stream(long_turn):
        received.append(chunk)
        if len(received) == 2:
            threading.Thread(target=base.cancel).start()
    elapsed = time.perf_counter() - started
    assert len(received) >= 2
    assert base.last_usage.new_tokens < 200
    assert elapsed < 30
    assert len(run(base, CODE_PROMPT)) > 1, "the next turn runs normally after a cancel"


def test_abandoned_stream_frees_the_model(base):
    stream = base.stream(Prompt(text="Once upon a time", max_new_tokens=4000))
    next(stream)
    stream.close()
    assert base.last_usage.new_tokens < 200
    assert run(base, CODE_PROMPT)


def test_second_stream_while_busy_is_refused(base):
    first = base.stream(Prompt(text="Once upon a time", max_new_tokens=4000))
    next(first)
    try:
        with pytest.raises(BackendError, match="already generating"):
            next(base.stream(CODE_PROMPT))
    finally:
        first.close()


def test_scripted_tool_call_stops_at_eos(scripted):
    text = "".join(run(scripted, Prompt(messages=SCRIPTED_MESSAGES, max_new_tokens=100)))
    assert text == SCRIPTED_REPLY
    assert scripted.last_usage.new_tokens == len(scripted.tokenizer.encode(SCRIPTED_REPLY)) + 1


def test_stop_after_keeps_the_stop_string_and_ends_generation(scripted):
    prompt = Prompt(messages=SCRIPTED_MESSAGES, stop_after=['"bash"'], max_new_tokens=100)
    assert "".join(run(scripted, prompt)) == '<tool_call>\n{"name": "bash"'
    assert scripted.last_usage.new_tokens < len(scripted.tokenizer.encode(SCRIPTED_REPLY))


def test_stop_before_cuts_the_stop_string(scripted):
    prompt = Prompt(messages=SCRIPTED_MESSAGES, stop_before=['"arguments"'], max_new_tokens=100)
    assert "".join(run(scripted, prompt)) == '<tool_call>\n{"name": "bash", '
    assert scripted.last_usage.new_tokens < len(scripted.tokenizer.encode(SCRIPTED_REPLY))


def test_thinking_on_streams_the_think_block(scripted_model_dir, scripted):
    thinking = HFBackend(str(scripted_model_dir), enable_thinking=True)
    try:
        prompt = Prompt(messages=SCRIPTED_MESSAGES, max_new_tokens=100)
        assert "".join(run(thinking, prompt)) == SCRIPTED_THINKING_REPLY
        empty_think_block = len(thinking.tokenizer.encode("<think>\n\n</think>\n\n"))
        assert scripted.count_tokens(prompt) == thinking.count_tokens(prompt) + empty_think_block
    finally:
        thinking.close()


def test_think_block_becomes_the_thought_of_the_parsed_step(scripted_model_dir):
    from agent_core.actions import Bash
    from agent_core.formats import parse

    thinking = HFBackend(str(scripted_model_dir), enable_thinking=True)
    try:
        raw = "".join(run(thinking, Prompt(messages=SCRIPTED_MESSAGES, stop_after=["</tool_call>"])))
    finally:
        thinking.close()
    step = parse(raw, "toolcall")
    assert step.action == Bash(command="ls")
    assert step.thought.strip() == SCRIPTED_THOUGHT


def test_thinking_defaults_to_the_template_default(scripted_model_dir):
    default = HFBackend(str(scripted_model_dir))
    try:
        text = "".join(run(default, Prompt(messages=SCRIPTED_MESSAGES, max_new_tokens=100)))
        assert text == SCRIPTED_THINKING_REPLY
    finally:
        default.close()


def test_count_tokens_matches_the_chat_template(scripted):
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    prompt = Prompt(messages=SCRIPTED_MESSAGES, tools=tools)
    expected = scripted.tokenizer.apply_chat_template(
        SCRIPTED_MESSAGES, tools=tools, add_generation_prompt=True, enable_thinking=False, return_dict=False
    )
    assert scripted.count_tokens(prompt) == len(expected)
    assert scripted.count_tokens(Prompt(text="hello world")) == 2


def test_empty_prompt_is_an_error(scripted):
    for empty in (Prompt(), Prompt(text="")):
        with pytest.raises(BackendError, match="empty prompt"):
            next(scripted.stream(empty))
