"""How training moved each kind of decision, measured by trl itself.

Four sets of completions, each under the prompt the model read:

* `approved`: replies the user approved (should get likelier);
* `edited`: the user's edits of a reply (should get likelier);
* `original`: the model's replies the user then edited (should get less likely);
* `rejected`: replies the user rejected (should get less likely).

Each set is a KTO evaluation dataset (true rows for the first two, false for the others),
evaluated with trl's `KTOTrainer.evaluate` before and after training; the figures are trl's own
evaluation metrics, `logps/chosen` or `logps/rejected` (the mean over the set's rows of the
summed log-probability of the completion) and `rewards/*` (β times the log-ratio against the
reference, the adapter switched off: zero before a new adapter trains). A `logps` that moves the wrong way is
a warning (`wrong_way`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_core.learn.history import Label, ModelTurn
from agent_core.learn.rows import Renderer, edit_of

DECISIONS = ("approved", "edited", "original", "rejected")
WANTED = {"approved": True, "edited": True, "original": False, "rejected": False}


def decision_rows(turns: list[ModelTurn], renderer: Renderer) -> dict[str, list[dict[str, Any]]]:
    """The KTO rows of each decision set (sets with no row are left out)."""
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in DECISIONS}
    for turn in turns:
        edit = edit_of(turn)
        completions = {
            Label.APPROVED: [("approved", turn.reply)],
            Label.REJECTED: [("rejected", turn.reply)],
            Label.EDITED: [("edited", edit), ("original", turn.reply)] if edit else [],
        }.get(turn.label, [])
        if not completions:
            continue
        prompt = renderer.prompt(turn)
        renderer.check(turn, prompt)
        for name, reply in completions:
            found[name].append({"prompt": prompt, "label": WANTED[name],
                                "completion": renderer.completion(turn.prompt, reply)})
    return {name: rows for name, rows in found.items() if rows}


def measure(model: Any, tokenizer: Any, sets: dict[str, list[dict[str, Any]]], work_dir: Path,
            max_length: int | None) -> dict[str, dict[str, float]]:
    """trl's evaluation metrics (`logps/*`, `rewards/*`) of each set, for the model as it is."""
    if not sets:
        return {}
    import torch
    from datasets import Dataset
    from trl import KTOConfig, KTOTrainer

    from agent_core.learn.recipes import BETA, SEED, drop_reference, kto_weights, precision
    from agent_core.learn.recipes import model_eos_kept, quiet, silence

    quiet()

    anything = next(iter(sets.values()))
    desirable, undesirable = kto_weights([bool(row["label"]) for row in anything])
    # `apo_zero_unpaired`: the same logps and rewards without KTO's KL pass (half the work).
    mixed = precision()
    config = KTOConfig(
        output_dir=str(work_dir), per_device_eval_batch_size=8, report_to=[], disable_tqdm=True,
        bf16=mixed["bf16"], fp16=mixed["fp16"], use_cpu=not torch.cuda.is_available(),
        seed=SEED, beta=BETA,
        max_length=max_length, gradient_checkpointing=False, dataloader_pin_memory=False,
        loss_type="apo_zero_unpaired", desirable_weight=desirable,
        undesirable_weight=undesirable,
    )
    with model_eos_kept(model):
        trainer = KTOTrainer(model=model, args=config, train_dataset=Dataset.from_list(anything),
                             processing_class=tokenizer)
    silence(trainer)
    drop_reference(model)  # the reference is the base model, the same before and after
    found = {}
    for name, rows in sets.items():
        with model_eos_kept(model):
            metrics = trainer.evaluate(eval_dataset=Dataset.from_list(rows))
        kind = "chosen" if WANTED[name] else "rejected"
        found[name] = {
            key: round(float(metrics[f"eval_{key}/{kind}"]), 6)
            for key in ("logps", "rewards") if f"eval_{key}/{kind}" in metrics
        }
        found[name]["rows"] = len(rows)
    return found


def wrong_way(split: str, before: dict[str, dict[str, float]],
              after: dict[str, dict[str, float]]) -> list[str]:
    """A warning for each set whose likelihood moved against the user's decision."""
    warnings = []
    for name in DECISIONS:
        if name not in before or name not in after:
            continue
        old, new = before[name]["logps"], after[name]["logps"]
        if (new < old) if WANTED[name] else (new > old):
            direction = "less" if WANTED[name] else "more"
            warnings.append(
                f"{split} {name} completions got {direction} likely ({old:.3f} -> {new:.3f} "
                f"nats per completion, trl logps, {before[name]['rows']} rows)"
            )
    return warnings
