"""The trl trainer for each method, configured for navtui's rows, and each method's defaults.

What every method shares: the rows are prompt/completion strings (no chat template applied by
trl), loss on completions only, `max_length` the model's window (rows that do not fit were left
out before, `agent_core.learn.trainer`), no checkpoints written (the adapter is saved once, at
the end), no reporting to outside services, a fixed seed. DPO on its own adds an SFT term on
the chosen completion (`loss_type=["sigmoid", "sft"]`): plain DPO on one edit pair can lower the
edit's likelihood while it raises the margin. After an SFT phase on the same chosen replies
(`--method auto`) the DPO phase is plain (`chosen_sft=False`): the SFT phase already made them
likelier, and an SFT term would keep raising what the chosen and rejected replies share (on
short completions it outweighs the DPO term token for token), so the rejected reply would get
likelier with it.

trl appends the tokenizer's EOS token to every completion that does not end with it. navtui's
completions already end the way the model ends a turn (`<|im_end|>` for Qwen chat models,
`\\n\\nObservation:` for the text dialect, where inference stops at a stop string), so the
trainers get a copy of the tokenizer whose EOS is the text the completions end with
(`row_tokenizer`): nothing is appended, and the model does not learn to write an end-of-text
token after `Observation:` that inference never saw.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Recipe:
    """A method's defaults for a LoRA adapter."""

    lr: float
    epochs: float


# Learning rates of trl's own LoRA examples (trl/scripts/*.py of trl 1.x, "# LoRA:" commands):
# SFT `--learning_rate 2.0e-4 --use_peft` (sft.py); DPO `--learning_rate 5.0e-6 --use_peft`
# (dpo.py; 5.0e-7 for full training); KTO: "the optimal configuration for KTO will be similar
# to that of DPO" (kto.py), so DPO's LoRA rate. Preference rates are ~40x below SFT's: DPO and
# KTO move the policy away from a reference, and a high rate overshoots within a few steps.
# Epochs: a few hundred rows are a small dataset; three passes (transformers' own default)
# let every row count without the memorising a tenth pass brings.
RECIPES = {"sft": Recipe(2e-4, 3.0), "dpo": Recipe(5e-6, 3.0), "kto": Recipe(5e-6, 3.0)}
BETA = 0.1  # trl's default β for DPO and KTO (DPOConfig.beta, KTOConfig.beta)
SEED = 0
BATCH = 8  # the effective batch (trl's examples use 16 on datasets of thousands of rows)
MIN_STEPS_PER_EPOCH = 4


def batch_plan(method: str, rows: int) -> tuple[int, int]:
    """(rows per device step, gradient accumulation steps): an effective batch of `BATCH`, less
    when an epoch would otherwise have fewer than `MIN_STEPS_PER_EPOCH` optimizer steps. KTO's
    KL term compares each completion with another row's: two rows a device step at least."""
    effective = max(1, min(BATCH, rows // MIN_STEPS_PER_EPOCH))
    per_device = 2 if method == "kto" else 1
    return per_device, max(1, effective // per_device)


def kto_weights(labels: list[bool]) -> tuple[float, float]:
    """(desirable_weight, undesirable_weight) for these labels: the rarer class weighted up so
    λ_D·n_D / (λ_U·n_U) lies in [1, 4/3], the range of the KTO paper's Eq. (8) that trl checks
    (and warns about when it does not hold)."""
    desirable = max(sum(labels), 1)
    undesirable = max(len(labels) - sum(labels), 1)
    if desirable == undesirable:
        return 1.0, 1.0
    if desirable < undesirable:
        return round(undesirable / desirable * 1.15, 2), 1.0
    return 1.0, round(desirable / undesirable / 1.15, 2)


def precision() -> dict[str, bool]:
    """Mixed precision for this machine: bf16 where the GPU supports it, fp16 on other CUDA GPUs
    (T4, V100), neither on CPU."""
    import torch

    if not torch.cuda.is_available():
        return {"bf16": False, "fp16": False}
    bf16 = torch.cuda.is_bf16_supported()
    return {"bf16": bf16, "fp16": not bf16}


def model_dtype() -> Any:
    """The dtype the base model is loaded in, matching `precision()` (fp32 on CPU)."""
    import torch

    found = precision()
    return torch.bfloat16 if found["bf16"] else torch.float16 if found["fp16"] else torch.float32


def row_tokenizer(tokenizer: Any, ending: str) -> Any:
    """A copy of `tokenizer` whose EOS token is the last token of `ending`, the text every
    completion ends with, so trl appends nothing (see the module docstring)."""
    ids = tokenizer.encode(ending, add_special_tokens=False)
    last = tokenizer.convert_ids_to_tokens(ids[-1:])[0] if ids else None
    if last is None or last == tokenizer.eos_token or not ending.endswith(tokenizer.decode(ids[-1:])):
        return tokenizer
    found = copy.deepcopy(tokenizer)
    found.eos_token = tokenizer.decode(ids[-1:])
    return found


def drop_reference(model: Any) -> None:
    """Remove the `ref` adapter trl's DPO and KTO trainers add (a frozen copy of the adapter as
    it was when the trainer was made), so the next trainer can add its own and trl's evaluation
    measures against the base model (the adapter switched off)."""
    if "ref" in getattr(model, "peft_config", {}):
        model.delete_adapter("ref")


@contextmanager
def model_eos_kept(model: Any) -> Iterator[None]:
    """transformers aligns the model's EOS ids with the trainer's tokenizer, whose EOS is the
    rows' last token (`row_tokenizer`); put the model's own back when the block ends."""
    configs = [c for c in (getattr(model, "config", None), getattr(model, "generation_config",
                                                                   None)) if c is not None]
    saved = [copy.deepcopy(getattr(c, "eos_token_id", None)) for c in configs]
    try:
        yield
    finally:
        for config, eos in zip(configs, saved):
            config.eos_token_id = eos


def silence(trainer: Any) -> None:
    """No printed logs or progress bars from `trainer` (navtui reports through events)."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)


def quiet() -> None:
    """No progress bars or per-step prints from datasets and transformers."""
    import datasets
    from transformers.utils import logging as hf_logging

    datasets.disable_progress_bars()
    hf_logging.set_verbosity_error()


@dataclass
class Schedule:
    """How long and how fast one phase trains."""

    lr: float
    epochs: float
    max_steps: int | None
    per_device: int
    accumulation: int

    @property
    def batch(self) -> int:
        return self.per_device * self.accumulation


def _common(work_dir: Path, schedule: Schedule) -> dict[str, Any]:
    import torch

    return {
        "output_dir": str(work_dir),
        "per_device_train_batch_size": schedule.per_device,
        "per_device_eval_batch_size": 2,
        "gradient_accumulation_steps": schedule.accumulation,
        "learning_rate": schedule.lr,
        "num_train_epochs": schedule.epochs,
        "max_steps": schedule.max_steps if schedule.max_steps is not None else -1,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "disable_tqdm": True,
        **precision(),
        "use_cpu": not torch.cuda.is_available(),
        "dataloader_pin_memory": False,
        "remove_unused_columns": True,
        "seed": SEED,
        "data_seed": SEED,
    }


def trainer_for(
    method: str,
    model: Any,
    tokenizer: Any,
    dataset: Any,
    *,
    work_dir: Path,
    max_length: int | None,
    schedule: Schedule,
    callback: Any = None,
    chosen_sft: bool = True,
) -> Any:
    """A ready trl trainer for `method` (sft | dpo | kto) over `dataset`; it prints nothing
    itself (progress goes through `callback`)."""
    trainer = _make(method, model, tokenizer, dataset, _common(work_dir, schedule), max_length,
                    chosen_sft)
    silence(trainer)
    if callback is not None:
        trainer.add_callback(callback)
    return trainer


def _make(method: str, model: Any, tokenizer: Any, dataset: Any, common: dict[str, Any],
          max_length: int | None, chosen_sft: bool) -> Any:
    if method == "sft":
        from trl import SFTConfig, SFTTrainer

        sft = SFTConfig(**common, max_length=max_length, completion_only_loss=True)
        return SFTTrainer(model=model, args=sft, train_dataset=dataset,
                          processing_class=tokenizer)
    if method == "dpo":
        from trl import DPOConfig, DPOTrainer

        dpo = DPOConfig(**common, max_length=max_length, beta=BETA,
                     loss_type=["sigmoid", "sft"] if chosen_sft else ["sigmoid"])
        return DPOTrainer(model=model, args=dpo, train_dataset=dataset,
                          processing_class=tokenizer)
    if method == "kto":
        from trl import KTOConfig, KTOTrainer

        desirable, undesirable = kto_weights(list(dataset["label"]))
        kto = KTOConfig(**common, max_length=max_length, beta=BETA,
                     desirable_weight=desirable, undesirable_weight=undesirable)
        return KTOTrainer(model=model, args=kto, train_dataset=dataset,
                          processing_class=tokenizer)
    raise ValueError(f"unknown method {method!r}")
