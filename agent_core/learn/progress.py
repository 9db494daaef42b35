"""Training progress as events: a `transformers.TrainerCallback` that reports each logged step
(`{"event": "step", "method", "step", "max_steps", "loss", "eta"}`, `eta` in seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from transformers import TrainerCallback


class ProgressCallback(TrainerCallback):
    def __init__(self, method: str, emit: Callable[[dict[str, Any]], None]) -> None:
        self.method = method
        self.emit = emit
        self.started = time.monotonic()

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.started = time.monotonic()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict | None = None,
               **kwargs: Any) -> None:
        logs = logs or {}
        if "loss" not in logs:
            return
        step, total = state.global_step, state.max_steps
        elapsed = time.monotonic() - self.started
        eta = elapsed / step * (total - step) if step else None
        self.emit({
            "event": "step", "method": self.method, "step": step, "max_steps": total,
            "loss": round(float(logs["loss"]), 6), "eta": None if eta is None else round(eta, 1),
        })
