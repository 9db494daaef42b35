"""Training progress as events: a `transformers.TrainerCallback` that reports each logged step
(`{"event": "step", "method", "step", "max_steps", "loss", "eta"}`, `eta` in seconds).
transformers is imported when the callback is made, not with this module."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def progress_callback(method: str, emit: Callable[[dict[str, Any]], None]) -> Any:
    """A TrainerCallback that sends a `step` event for every logged training step."""
    from transformers import TrainerCallback

    class Progress(TrainerCallback):
        started = time.monotonic()

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if logs is None or "loss" not in logs:
                return
            step, total = state.global_step, state.max_steps
            elapsed = time.monotonic() - self.started
            eta = elapsed / step * (total - step) if step else None
            emit({
                "event": "step", "method": method, "step": step, "max_steps": total,
                "loss": round(float(logs["loss"]), 6),
                "eta": None if eta is None else round(eta, 1),
            })

    return Progress()
