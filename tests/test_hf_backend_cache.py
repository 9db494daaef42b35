"""KV-cache reuse across turns: same text as without reuse, only the new suffix prefilled."""

from __future__ import annotations

import pytest

from agent_core.backends.base import Prompt
from agent_core.backends.hf import HFBackend
from agent_core.backends.kv_cache import PrefixCache, common_prefix

OBSERVATIONS = [
    "tests/test_app.py::test_total FAILED\nAssertionError: assert 3 == 4",
    "def total(items):\n    return sum(items) - 1\n",
    "1 file changed, 1 insertion(+), 1 deletion(-)",
]


@pytest.fixture(scope="module")
def pair(tiny_model_dir):
    reusing = HFBackend(str(tiny_model_dir))
    fresh = HFBackend(str(tiny_model_dir), reuse_cache=False)
    yield reusing, fresh
    reusing.close()
    fresh.close()


def conversation(backend: HFBackend, turns: int) -> list[tuple[str, Prompt]]:
    """Run `turns` turns, each adding the reply and an observation; return (reply, prompt) per turn."""
    messages = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "The total is off by one. Fix it."},
    ]
    history = []
    for turn in range(turns):
        prompt = Prompt(messages=[dict(m) for m in messages], max_new_tokens=12)
        reply = "".join(backend.stream(prompt))
        history.append((reply, prompt))
        messages += [
            {"role": "assistant", "content": reply},
            {"role": "user", "content": f"<tool_response>\n{OBSERVATIONS[turn]}\n</tool_response>"},
        ]
    return history


def test_reuse_changes_nothing_but_the_prefill(pair):
    reusing, fresh = pair
    with_reuse = conversation(reusing, 3)
    assert reusing.last_usage.cached_tokens > 0
    without = conversation(fresh, 3)
    assert fresh.last_usage.cached_tokens == 0
    assert [reply for reply, _ in with_reuse] == [reply for reply, _ in without]
    assert all(reply for reply, _ in with_reuse)


def test_later_turns_prefill_only_what_was_added(pair):
    reusing, _ = pair
    sizes, cached = [], []
    messages = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "The total is off by one. Fix it."},
    ]
    for observation in OBSERVATIONS:
        prompt = Prompt(messages=list(messages), max_new_tokens=12)
        reply = "".join(reusing.stream(prompt))
        sizes.append(reusing.last_usage.prompt_tokens)
        cached.append(reusing.last_usage.cached_tokens)
        messages += [
            {"role": "assistant", "content": reply},
            {"role": "user", "content": f"<tool_response>\n{observation}\n</tool_response>"},
        ]
    for turn in (1, 2):
        prefilled = sizes[turn] - cached[turn]
        added = sizes[turn] - sizes[turn - 1]
        # All of the previous prompt is reused but perhaps its last token ("assistant\n"), which
        # can merge with a reply that starts with whitespace when the history is re-tokenized.
        assert cached[turn] >= sizes[turn - 1] - 1
        assert prefilled <= added + 1


def test_edited_history_reuses_only_the_common_prefix(pair):
    reusing, fresh = pair
    first = Prompt(text="def total(items):\n    return sum(items) - 1\n\n# tests\n", max_new_tokens=8)
    list(reusing.stream(first))
    edited = Prompt(text="def total(items):\n    return sum(items)\n\n# tests\n", max_new_tokens=8)
    reply = "".join(reusing.stream(edited))
    shared = common_prefix(reusing.tokenizer.encode(first.text), reusing.tokenizer.encode(edited.text))
    assert 0 < shared < reusing.last_usage.prompt_tokens
    assert reusing.last_usage.cached_tokens == shared
    assert reply == "".join(fresh.stream(edited))


def test_unrelated_prompt_is_prefilled_in_full(pair):
    reusing, _ = pair
    list(reusing.stream(Prompt(text="alpha beta gamma", max_new_tokens=4)))
    list(reusing.stream(Prompt(text="zeta eta theta", max_new_tokens=4)))
    assert reusing.last_usage.cached_tokens == 0


def test_prefix_cache_leaves_one_token_to_prefill():
    import torch
    from transformers import DynamicCache

    prefix = PrefixCache(DynamicCache)
    cache, reused = prefix.prepare([1, 2, 3, 4])
    assert reused == 0
    cache.update(torch.zeros(1, 1, 4, 2), torch.zeros(1, 1, 4, 2), 0)
    prefix.store([1, 2, 3, 4, 5])
    assert prefix.ids == [1, 2, 3, 4]
    cache, reused = prefix.prepare([1, 2, 3, 4])
    assert reused == 3 and cache.get_seq_length() == 3
    cache, reused = prefix.prepare([1, 2, 9])
    assert reused == 2 and cache.get_seq_length() == 2


def test_disabled_prefix_cache_never_reuses():
    import torch
    from transformers import DynamicCache

    prefix = PrefixCache(DynamicCache, enabled=False)
    cache, _ = prefix.prepare([1, 2, 3])
    cache.update(torch.zeros(1, 1, 3, 2), torch.zeros(1, 1, 3, 2), 0)
    prefix.store([1, 2, 3])
    second, reused = prefix.prepare([1, 2, 3, 4])
    assert reused == 0 and second is not cache
