"""The openai backend against a real OpenAI-compatible server: `transformers serve` running the
scripted tiny Qwen3 (its greedy reply to SCRIPTED_MESSAGES is one known bash tool call)."""

from __future__ import annotations

import threading

import httpx

from agent_core.backends.base import Prompt
from agent_core.backends.openai_compat import OpenAIBackend
from tests.fixtures.servers import ServedModel
from tests.tiny_model import SCRIPTED_MESSAGES, SCRIPTED_REPLY, SCRIPTED_THINKING_REPLY

BASH_TOOL = {"type": "function", "function": {
    "name": "bash", "description": "Run a command in bash.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                   "required": ["command"]}}}
STOP_AFTER = ["</tool_call>"]


def scripted_text_prompt(model_dir: str) -> str:
    """SCRIPTED_MESSAGES rendered by the model's chat template, as a raw completion prompt."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return tokenizer.apply_chat_template(
        SCRIPTED_MESSAGES, add_generation_prompt=True, enable_thinking=False, tokenize=False
    )


def test_multi_turn_tool_call_conversation(transformers_server: ServedModel) -> None:
    backend = OpenAIBackend(transformers_server.base_url, transformers_server.model,
                            tokenizer=transformers_server.model, thinking=False)
    first = Prompt(messages=list(SCRIPTED_MESSAGES), stop_after=STOP_AFTER, max_new_tokens=64)
    # The server parses the call into structured tool_calls; the backend rebuilds the text.
    assert "".join(backend.stream(first)) == SCRIPTED_REPLY
    usage = backend.last_usage
    assert usage is not None
    assert usage.prompt_tokens == backend.count_tokens(first)
    assert usage.new_tokens > 5 and usage.time_to_first_token > 0

    second = Prompt(
        messages=[*SCRIPTED_MESSAGES,
                  {"role": "assistant", "content": SCRIPTED_REPLY},
                  {"role": "tool", "content": "calc/\ntests/\nREADME.md"}],
        tools=[BASH_TOOL], stop_after=STOP_AFTER, max_new_tokens=24,
    )
    # Off its script the model writes what it likes (a broken call comes back from the server as
    # an error event): the turn still ends normally, and the history and tools were accepted.
    text = "".join(backend.stream(second))
    assert isinstance(text, str)
    assert backend.last_usage is not None and backend.last_usage.new_tokens > 0
    assert backend.last_usage.prompt_tokens > usage.prompt_tokens + 40
    backend.close()


def test_thinking_streams_back_as_a_think_block(transformers_server: ServedModel) -> None:
    backend = OpenAIBackend(transformers_server.base_url, transformers_server.model, thinking=True)
    prompt = Prompt(messages=list(SCRIPTED_MESSAGES), stop_after=STOP_AFTER, max_new_tokens=64)
    chunks = list(backend.stream(prompt))
    assert "".join(chunks) == SCRIPTED_THINKING_REPLY
    assert len(chunks) > 5


def test_text_prompt_streams_token_by_token(transformers_server: ServedModel) -> None:
    """/v1/completions has no tool parser: the reply arrives as raw text, a few tokens a chunk."""
    backend = OpenAIBackend(transformers_server.base_url, transformers_server.model)
    prompt = Prompt(text=scripted_text_prompt(transformers_server.model), max_new_tokens=64)
    chunks = list(backend.stream(prompt))
    assert "".join(chunks) == SCRIPTED_REPLY
    assert len(chunks) > 5
    usage = backend.last_usage
    assert usage is not None
    assert usage.prompt_tokens > 20 and usage.new_tokens >= len(chunks)


def test_cancel_mid_stream_then_the_server_still_serves(transformers_server: ServedModel) -> None:
    backend = OpenAIBackend(transformers_server.base_url, transformers_server.model)
    prompt = Prompt(text=scripted_text_prompt(transformers_server.model), max_new_tokens=64)
    received = []
    for chunk in backend.stream(prompt):
        received.append(chunk)
        canceller = threading.Thread(target=backend.cancel)
        canceller.start()
        canceller.join()
    assert len(received) == 1
    assert SCRIPTED_REPLY.startswith(received[0]) and received[0] != SCRIPTED_REPLY
    root = transformers_server.base_url.removesuffix("/v1")
    assert httpx.get(f"{root}/health", timeout=5).status_code == 200
    assert "".join(backend.stream(prompt)) == SCRIPTED_REPLY
