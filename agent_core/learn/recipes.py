"""The trl trainer for each method, configured for navtui's rows.

What every method shares: the rows are prompt/completion strings (no chat template applied by
trl), loss on completions only, `max_length` the model's window (rows that do not fit were left
out before, `agent_core.learn.trainer`), batch size 1, no checkpoints written (the adapter is
saved once, at the end), no reporting to outside services. DPO adds an SFT term on the chosen
completion (`loss_type=["sigmoid", "sft"]`): on its own, DPO on one edit pair can lower the
edit's likelihood while it raises the margin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def quiet() -> None:
    """No progress bars or per-step prints from datasets and transformers."""
    import datasets
    from transformers.utils import logging as hf_logging

    datasets.disable_progress_bars()
    hf_logging.set_verbosity_error()


def _common(work_dir: Path, max_steps: int | None, epochs: float, lr: float) -> dict[str, Any]:
    import torch

    return {
        "output_dir": str(work_dir),
        "per_device_train_batch_size": 1,
        "gradient_accumulation_steps": 1,
        "learning_rate": lr,
        "num_train_epochs": epochs,
        "max_steps": max_steps if max_steps is not None else -1,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "disable_tqdm": True,
        "bf16": torch.cuda.is_available(),
        "use_cpu": not torch.cuda.is_available(),
        "dataloader_pin_memory": False,
        "remove_unused_columns": True,
        "seed": 0,
    }


def trainer_for(
    method: str,
    model: Any,
    tokenizer: Any,
    dataset: Any,
    *,
    work_dir: Path,
    max_length: int | None,
    max_steps: int | None,
    epochs: float,
    lr: float,
    callback: Any,
) -> Any:
    """A ready trl trainer for `method` (sft | dpo | kto) over `dataset`; it prints nothing
    itself (progress goes through `callback`)."""
    trainer = _make(method, model, tokenizer, dataset, _common(work_dir, max_steps, epochs, lr),
                    max_length, callback)
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer


def _make(method: str, model: Any, tokenizer: Any, dataset: Any, common: dict[str, Any],
          max_length: int | None, callback: Any) -> Any:
    if method == "sft":
        from trl import SFTConfig, SFTTrainer

        sft = SFTConfig(**common, max_length=max_length, completion_only_loss=True)
        return SFTTrainer(model=model, args=sft, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[callback])
    if method == "dpo":
        from trl import DPOConfig, DPOTrainer

        dpo = DPOConfig(**common, max_length=max_length, loss_type=["sigmoid", "sft"])
        return DPOTrainer(model=model, args=dpo, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[callback])
    if method == "kto":
        from trl import KTOConfig, KTOTrainer

        # KTO's KL term compares each completion with another row's: two rows a batch at least.
        kto = KTOConfig(**{**common, "per_device_train_batch_size": 2}, max_length=max_length)
        return KTOTrainer(model=model, args=kto, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[callback])
    raise ValueError(f"unknown method {method!r}")
