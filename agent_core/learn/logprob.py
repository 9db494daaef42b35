"""How likely a model finds a completion: the mean per-token log-probability after its prompt.

The measure `navtui finetune` reports before and after training (`before`, `after`): over the
chosen completions (SFT completions, DPO `chosen`, KTO rows labelled true), tokens weighted
equally. The completion's tokens are those where `prompt + completion` tokenizes past the
prompt's tokens (the prompt is encoded as inference encodes it, with no added tokens).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def completion_span(tokenizer: Any, prompt: str, completion: str) -> tuple[list[int], int]:
    """(ids of prompt + completion, index of the first completion token)."""
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
    ids = tokenizer.encode(prompt + completion, add_special_tokens=False)
    start = 0
    for a, b in zip(prompt_ids, ids):
        if a != b:
            break
        start += 1
    return ids, start


def mean_logprob(model: Any, tokenizer: Any, pairs: Iterable[tuple[str, str]]) -> float | None:
    """Mean per-token log-probability of each completion after its prompt (None: no pairs)."""
    import torch

    total, count = 0.0, 0
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        for prompt, completion in pairs:
            ids, start = completion_span(tokenizer, prompt, completion)
            if start >= len(ids) or start == 0:
                continue
            inputs = torch.tensor([ids], device=device)
            logits = model(input_ids=inputs).logits[0, start - 1 : -1].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            targets = inputs[0, start:]
            total += logprobs.gather(1, targets[:, None]).sum().item()
            count += len(targets)
    if was_training:
        model.train()
    return total / count if count else None


def chosen_pairs(method: str, rows: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(prompt, chosen completion) of each row of `method`."""
    if method == "dpo":
        return [(row["prompt"], row["chosen"]) for row in rows]
    if method == "kto":
        return [(row["prompt"], row["completion"]) for row in rows if row["label"]]
    return [(row["prompt"], row["completion"]) for row in rows]
