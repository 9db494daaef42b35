"""Each method's defaults come from trl's own LoRA examples, batches fit a few hundred rows, KTO's
class weights are set from the class counts (so trl does not warn), and precision follows what
the GPU supports."""

from __future__ import annotations

import logging

import pytest

from agent_core.learn import recipes
from agent_core.learn.recipes import RECIPES, Schedule, batch_plan, kto_weights, precision


def test_preference_methods_learn_far_slower_than_sft():
    assert RECIPES["sft"].lr == 2e-4  # trl/scripts/sft.py, LoRA
    assert RECIPES["dpo"].lr == 5e-6 and RECIPES["kto"].lr == 5e-6  # dpo.py, LoRA; kto.py
    assert all(recipe.epochs == 3 for recipe in RECIPES.values())


@pytest.mark.parametrize(("method", "rows", "plan"), [
    ("sft", 300, (1, 8)), ("dpo", 300, (1, 8)), ("kto", 300, (2, 4)),
    ("sft", 12, (1, 3)), ("sft", 3, (1, 1)), ("kto", 5, (2, 1)),
])
def test_the_batch_is_eight_rows_unless_an_epoch_would_be_too_short(method, rows, plan):
    assert batch_plan(method, rows) == plan


@pytest.mark.parametrize("labels", [[True] * 3 + [False], [True] + [False] * 5,
                                    [True] * 7 + [False] * 2, [True, False]])
def test_kto_weights_lie_in_the_papers_range(labels):
    desirable, undesirable = kto_weights(labels)
    n_d, n_u = sum(labels), len(labels) - sum(labels)
    assert 1 <= (desirable * n_d) / (undesirable * n_u) <= 4 / 3
    assert 1.0 in (desirable, undesirable)


@pytest.mark.slow
def test_trl_does_not_warn_about_the_class_balance(tiny_model_dir, tmp_path, caplog,
                                                   monkeypatch):
    from datasets import Dataset
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny_model_dir),
                           LoraConfig(r=2, target_modules=["q_proj"], task_type="CAUSAL_LM"))
    rows = Dataset.from_list(
        [{"prompt": "Thought:", "completion": f" step {i}<|im_end|>", "label": i != 0}
         for i in range(5)]
    )

    def warnings() -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            trainer = recipes.trainer_for("kto", model, tokenizer, rows, work_dir=tmp_path / "w",
                                          max_length=None, schedule=Schedule(5e-6, 1, 1, 2, 1))
        recipes.drop_reference(model)
        found = (trainer.args.desirable_weight, trainer.args.undesirable_weight)
        return [found, *(r.getMessage() for r in caplog.records if "desirable" in r.getMessage())]

    assert warnings() == [(1.0, 3.48)]
    monkeypatch.setattr(recipes, "kto_weights", lambda labels: (1.0, 1.0))  # trl's defaults
    assert len(warnings()) == 2


def test_precision_follows_the_gpu(monkeypatch):
    import torch

    assert precision() == {"bf16": False, "fp16": False}  # CPU
    assert recipes.model_dtype() == torch.float32
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)  # T4, V100
    assert precision() == {"bf16": False, "fp16": True}
    assert recipes.model_dtype() == torch.float16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert precision() == {"bf16": True, "fp16": False}
    assert recipes.model_dtype() == torch.bfloat16
