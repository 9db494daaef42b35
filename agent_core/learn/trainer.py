"""`navtui finetune`: a LoRA adapter trained with trl on every decision the user made in a
repository.

The rows come from the repository's logged sessions (`agent_core.learn.rows`), their prompts
rendered with BASE's tokenizer exactly as inference rendered them, as plain strings: trl then
applies no chat template of its own (so no `<think>` block appears where inference had none)
and the loss covers the completion only. `auto` runs SFT on the approved and edited steps, then
a preference phase that uses every rejection and every edit: DPO (edit pairs, and each rejected
reply against the reply the user approved next at that turn, with an SFT term on the chosen
side, so the user's choice gets likelier, not only relatively preferred) when every rejection
has such a pair, else KTO (approved and edits true, rejected and edited-away originals false).

Held-out rows are whole sessions, the newest (`agent_core.learn.split`), one split for every
phase. Before and after training each kind of decision (approved, edited, the model's original
of an edit, rejected), on the training and the held-out sessions, is measured with trl's own
evaluation metrics (`agent_core.learn.decisions`); one that moved the wrong way is a warning.

Every row must fit the model's window (`max_length`); one that does not is left out and named in
the `too_long` report, never cut. The adapter continues PARENT (its LoRA config) when one is
given, else the recipe of the model it serves: r16/α32 for the text dialect (the R2E model),
r64/α128 for the chat dialects (the navigator), on every attention and MLP projection.

Events go to `on_event` as dicts (`{"event": "phase" | "step" | "warning" | "done", ...}`), in
the main process only (`torchrun` / `accelerate launch` run one process per GPU); the result is
the summary with `out`, `method`, `rows`, `before`, `after`, `decisions`, `warnings` and more.
trl, datasets, peft and torch are imported here only when training starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_core.backends.hf_load import load_tokenizer, quantization_config, quiet_bitsandbytes
from agent_core.learn.adapter_dir import next_version, staged_output, write_manifest
from agent_core.learn.decisions import decision_rows, measure, wrong_way
from agent_core.learn.history import Label, ModelTurn, model_turns
from agent_core.learn.logprob import chosen_pairs, completion_span, mean_logprob
from agent_core.learn.provenance import hashes, is_main_process, model_mismatches, navtui_version
from agent_core.learn.recipes import BETA, RECIPES, SEED, Schedule, batch_plan, kto_weights
from agent_core.learn.recipes import model_dtype, precision, row_tokenizer
from agent_core.learn.rows import TEXT_TURN_END, Renderer, Row, build_rows, unpaired_rejections
from agent_core.learn.split import Split, SplitError, split_sessions
from agent_core.trajectory import find_trajectory, list_sessions, read_trajectory

METHODS = ("auto", "sft", "dpo", "kto")
PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# The seeds' recipes: the R2E text model (r16/α32) and the code navigator (r64/α128).
LORA_RECIPES = {"text": (16, 32), "chat": (64, 128)}
Events = Callable[[dict[str, Any]], None]


class FinetuneError(Exception):
    """Training cannot start or go on; the message says what to change."""


@dataclass
class FinetuneOptions:
    repo: Path
    model: str
    out: Path
    adapter: str | None = None
    sessions: list[str] | None = None
    method: str = "auto"
    max_steps: int | None = None
    epochs: float | None = None  # None: the method's default (`recipes.RECIPES`)
    lr: float | None = None  # None: the method's default
    load_in_4bit: bool = False
    holdout: float = 0.0


@dataclass
class Phase:
    """One trl run: its method, its train / held-out rows, and its schedule."""

    method: str
    train: list[Row]
    held_out: list[Row] = field(default_factory=list)
    schedule: Schedule | None = None
    chosen_sft: bool = True  # DPO: an SFT term on the chosen side (not after an SFT phase)


def logged_turns(options: FinetuneOptions) -> tuple[list[str], list[ModelTurn]]:
    """(session ids oldest first, model turns) of the sessions asked for (all of the repo's by
    default). A session id starts with its UTC start time, so ids sort by time."""
    if options.sessions:
        paths = [find_trajectory(options.repo, session) for session in options.sessions]
    else:
        paths = [summary.path for summary in list_sessions(options.repo)]
    trajectories = [read_trajectory(path) for path in paths]
    trajectories.sort(key=lambda t: t.session_id)
    ids, turns = [], []
    for trajectory in trajectories:
        ids.append(trajectory.session_id)
        turns.extend(model_turns(trajectory))
    if not turns:
        raise FinetuneError(
            f"no decided model turns in the sessions of {options.repo}: run navtui there first "
            "(approve, reject or edit its steps), or name sessions with --sessions"
        )
    return ids, turns


def plan_phases(method: str, turns: list[ModelTurn]) -> list[str]:
    """The trl runs `method` means for these turns (see the module docstring for `auto`)."""
    labels = {turn.label for turn in turns}
    if method != "auto":
        return [method]
    phases = ["sft"] if labels & {Label.APPROVED, Label.EDITED} else []
    if unpaired_rejections(turns):
        phases.append("kto")
    elif labels & {Label.EDITED, Label.REJECTED}:
        phases.append("dpo")
    return phases


def row_tokens(tokenizer: Any, method: str, row: dict[str, Any]) -> int:
    """The longest sequence the row makes (prompt plus its longest completion)."""
    completions = [row["chosen"], row["rejected"]] if method == "dpo" else [row["completion"]]
    return max(len(completion_span(tokenizer, row["prompt"], c)[0]) for c in completions)


def data_sha256(phases: list[Phase]) -> str:
    digest = hashlib.sha256()
    for phase in phases:
        for row in phase.train + phase.held_out:
            digest.update(json.dumps([phase.method, row.data], sort_keys=True).encode())
    return digest.hexdigest()


class Finetune:
    """One `navtui finetune` run (see the module docstring)."""

    def __init__(self, options: FinetuneOptions, on_event: Events = lambda event: None) -> None:
        if options.method not in METHODS:
            raise FinetuneError(f"unknown --method {options.method!r}; choose {', '.join(METHODS)}")
        if not 0 <= options.holdout < 1:
            raise FinetuneError("--holdout is a share of the sessions: 0 <= F < 1")
        self.options = options
        self.main = is_main_process()
        self.emit = on_event if self.main else (lambda event: None)
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        self.emit({"event": "warning", "message": message})

    def run(self) -> dict[str, Any]:
        options = self.options
        with staged_output(options.out, keep=self.main) as staging:
            session_ids, turns = logged_turns(options)
            try:
                split = split_sessions(session_ids, turns, options.holdout)
            except SplitError as error:
                raise FinetuneError(str(error)) from None
            for message in model_mismatches(options.model, turns):
                self.warn(message)
            tokenizer = load_tokenizer(options.model, options.adapter)
            model = self._load_model()
            window = int(getattr(model.config, "max_position_embeddings", 0) or 0) or None
            renderer = Renderer(tokenizer)
            phases, too_long, skipped = self._phases(split, renderer, tokenizer, window)
            model = self._with_adapter(model, turns)
            ending = TEXT_TURN_END if all(t.prompt.messages is None for t in turns) \
                else renderer.end_of_turn()
            trainer_tokenizer = row_tokenizer(tokenizer, ending)
            sets = {name: self._fitting(decision_rows(part, renderer), tokenizer, window)
                    for name, part in (("train", split.train), ("held_out", split.held_out))}

            def evaluate() -> dict[str, dict[str, dict[str, float]]]:
                return {name: measure(model, trainer_tokenizer, rows, staging / ".trl-eval",
                                      window) for name, rows in sets.items()}

            decisions_before, before = evaluate(), self._measure(model, tokenizer, phases)
            started = time.monotonic()
            steps = 0
            for phase in phases:
                steps += self._train(model, trainer_tokenizer, phase, staging, window)
            decisions_after, after = evaluate(), self._measure(model, tokenizer, phases)
            shutil.rmtree(staging / ".trl-eval", ignore_errors=True)
            for name in sets:
                for message in wrong_way(name.replace("_", "-"), decisions_before[name],
                                         decisions_after[name]):
                    self.warn(message)
            save_adapter(model, staging)
            summary = {
                "out": str(options.out),
                "method": "+".join(p.method for p in phases),
                "rows": sum(len(p.train) for p in phases),
                "held_out_rows": sum(len(p.held_out) for p in phases),
                "held_out_sessions": split.held_out_sessions,
                "before": before["train"],
                "after": after["train"],
                "held_out_before": before["held_out"],
                "held_out_after": after["held_out"],
                "decisions": {name: {"before": decisions_before[name],
                                     "after": decisions_after[name]} for name in sets},
                "warnings": list(self.warnings),
                "too_long": too_long,
                "skipped": skipped,
                "steps": steps,
                "seconds": round(time.monotonic() - started, 2),
            }
            if self.main:
                write_manifest(staging, self._manifest(session_ids, split, phases, summary,
                                                       model, tokenizer))
        self.emit({"event": "done", **summary})
        return summary

    # --- data ---------------------------------------------------------------------------------

    def _fitting(self, sets: dict[str, list[dict[str, Any]]], tokenizer: Any,
                 window: int | None) -> dict[str, list[dict[str, Any]]]:
        """The decision sets without the rows longer than the window (never cut)."""
        if window is None:
            return sets
        kept = {name: [row for row in rows if row_tokens(tokenizer, "kto", row) <= window]
                for name, rows in sets.items()}
        return {name: rows for name, rows in kept.items() if rows}

    def _phases(
        self, split: Split, renderer: Renderer, tokenizer: Any, window: int | None
    ) -> tuple[list[Phase], list[str], list[str]]:
        phases: list[Phase] = []
        too_long: list[str] = []
        skipped: list[str] = []
        for method in plan_phases(self.options.method, split.train + split.held_out):
            parts = []
            for turns in (split.train, split.held_out):
                built = build_rows(method, turns, renderer)
                skipped += built.skipped
                fitting = []
                for row in built.rows:
                    tokens = row_tokens(tokenizer, method, row.data)
                    if window is not None and tokens > window:
                        too_long.append(f"{row.name} ({method}: {tokens} tokens > {window})")
                    else:
                        fitting.append(row)
                parts.append(fitting)
            train, held_out = parts
            if method == "kto" and len(train) == 1:
                skipped.append(f"{train[0].name}: KTO needs at least two rows to train on")
                continue
            if train:
                after_sft = any(phase.method == "sft" for phase in phases)
                phases.append(Phase(method, train, held_out, self._schedule(method, train),
                                    chosen_sft=not after_sft))
        if not phases:
            raise FinetuneError(
                f"no rows to train on with --method {self.options.method}"
                + (f" ({len(too_long)} too long for the window: {'; '.join(too_long)})"
                   if too_long else "")
                + ": approve or edit some steps first, or choose another --method"
            )
        return phases, too_long, skipped

    def _schedule(self, method: str, train: list[Row]) -> Schedule:
        recipe = RECIPES[method]
        per_device, accumulation = batch_plan(method, len(train))
        return Schedule(
            lr=self.options.lr or recipe.lr,
            epochs=self.options.epochs if self.options.epochs is not None else recipe.epochs,
            max_steps=self.options.max_steps, per_device=per_device, accumulation=accumulation,
        )

    # --- model --------------------------------------------------------------------------------

    def _load_model(self) -> Any:
        quiet_bitsandbytes()
        import torch
        from transformers import AutoModelForCausalLM

        cuda = torch.cuda.is_available()
        if self.options.load_in_4bit and not cuda:
            raise FinetuneError("--load-in-4bit (QLoRA) needs a CUDA GPU; drop it on this machine")
        kwargs: dict[str, Any] = {"dtype": model_dtype()}
        if cuda:  # one whole copy per process: this process's GPU under `accelerate launch`
            kwargs["device_map"] = {"": int(os.environ.get("LOCAL_RANK", "0"))}
        if self.options.load_in_4bit:
            kwargs["quantization_config"] = quantization_config(True, False)
        try:
            model = AutoModelForCausalLM.from_pretrained(self.options.model, **kwargs)
        except OSError as error:
            raise FinetuneError(f"cannot load --model {self.options.model}: {error}") from None
        if self.options.load_in_4bit:
            from peft import prepare_model_for_kbit_training

            model = prepare_model_for_kbit_training(model)
        return model

    def _with_adapter(self, model: Any, turns: list[ModelTurn]) -> Any:
        from peft import LoraConfig, PeftModel, get_peft_model

        if self.options.adapter:
            return PeftModel.from_pretrained(model, self.options.adapter, is_trainable=True)
        text = all(turn.prompt.messages is None for turn in turns)
        rank, alpha = LORA_RECIPES["text" if text else "chat"]
        config = LoraConfig(
            r=rank, lora_alpha=alpha, lora_dropout=0.05, target_modules=PROJECTIONS,
            task_type="CAUSAL_LM",
        )
        return get_peft_model(model, config)

    def _measure(self, model: Any, tokenizer: Any, phases: list[Phase]) -> dict[str, float | None]:
        pairs: dict[str, list[Any]] = {"train": [], "held_out": []}
        for phase in phases:
            pairs["train"] += chosen_pairs(phase.method, [r.data for r in phase.train])
            pairs["held_out"] += chosen_pairs(phase.method, [r.data for r in phase.held_out])
        found = {}
        for key, chosen in pairs.items():
            value = mean_logprob(model, tokenizer, dict.fromkeys(chosen))
            found[key] = None if value is None else round(value, 6)
        return found

    # --- training -----------------------------------------------------------------------------

    def _train(self, model: Any, tokenizer: Any, phase: Phase, staging: Path,
               window: int | None) -> int:
        from datasets import Dataset

        from agent_core.learn.progress import progress_callback
        from agent_core.learn.recipes import drop_reference, model_eos_kept, quiet, trainer_for

        quiet()
        assert phase.schedule is not None
        self.emit({"event": "phase", "method": phase.method, "rows": len(phase.train),
                   "lr": phase.schedule.lr, "epochs": phase.schedule.epochs,
                   "batch": phase.schedule.batch})
        dataset = Dataset.from_list([row.data for row in phase.train])
        with model_eos_kept(model):
            trainer = trainer_for(
                phase.method, model, tokenizer, dataset,
                work_dir=staging / f".trl-{phase.method}",
                max_length=window,
                schedule=phase.schedule,
                callback=progress_callback(phase.method, self.emit),
                chosen_sft=phase.chosen_sft,
            )
            trainer.train()
        drop_reference(model)
        shutil.rmtree(staging / f".trl-{phase.method}", ignore_errors=True)
        return int(trainer.state.global_step)

    def _manifest(self, sessions: list[str], split: Split, phases: list[Phase],
                  summary: dict[str, Any], model: Any, tokenizer: Any) -> dict[str, Any]:
        import peft
        import torch
        import transformers
        import trl

        options = self.options
        per_phase = {}
        for phase in phases:
            assert phase.schedule is not None
            settings = asdict(phase.schedule) | {"batch": phase.schedule.batch}
            if phase.method in ("dpo", "kto"):
                settings["beta"] = BETA
            if phase.method == "dpo":
                settings["loss_type"] = ["sigmoid", "sft"] if phase.chosen_sft else ["sigmoid"]
            if phase.method == "kto":
                labels = [bool(row.data["label"]) for row in phase.train]
                settings["desirable_weight"], settings["undesirable_weight"] = kto_weights(labels)
            per_phase[phase.method] = settings
        return {
            "version": next_version(options.adapter),
            "base": options.model,
            "parent": options.adapter,
            "method": summary["method"],
            "sessions": sessions,
            "held_out": {"sessions": split.held_out_sessions, "turns": split.held_out_turns},
            "rows": {p.method: {"train": len(p.train), "held_out": len(p.held_out)} for p in phases},
            "data_sha256": data_sha256(phases),
            "hashes": hashes(options.model, options.adapter, tokenizer),
            "hyperparameters": {
                "lora": _lora_settings(model),
                "phases": per_phase,
                "seed": SEED,
                "precision": precision(),
                "load_in_4bit": options.load_in_4bit,
                "holdout": options.holdout,
            },
            "versions": {"navtui": navtui_version(), "trl": trl.__version__,
                         "peft": peft.__version__, "transformers": transformers.__version__,
                         "torch": torch.__version__},
            "metrics": {k: summary[k] for k in ("before", "after", "held_out_before",
                                                 "held_out_after", "decisions", "steps",
                                                 "seconds")},
            "warnings": summary["warnings"],
            "too_long": summary["too_long"],
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }


def save_adapter(model: Any, folder: Path) -> None:
    """The trained adapter only (not DPO's reference copy), without peft's model card."""
    model.save_pretrained(folder, selected_adapters=[model.active_adapter])
    (folder / "README.md").unlink(missing_ok=True)


def _lora_settings(model: Any) -> dict[str, Any]:
    config = model.peft_config[model.active_adapter]
    data = config.to_dict() if hasattr(config, "to_dict") else asdict(config)
    keep = ("r", "lora_alpha", "lora_dropout", "target_modules")
    return {k: sorted(v) if isinstance(v, set) else v for k, v in data.items() if k in keep}
