"""Scripted model turns: replays a JSON Lines file, one `{"output": "<raw model text>"}` per turn.

The same format a recorded session exports to, so any session can be replayed. Each turn streams
its output in small chunks, optionally with a delay per chunk to mimic a model's pace; the prompt
is ignored. A turn counts as used once it starts streaming, cancelled or not.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from agent_core.backends.base import Backend, BackendError, Prompt, Usage
from agent_core.backends.token_estimate import estimate_prompt_tokens, estimate_text_tokens
from agent_core.finish import FinishReason
from agent_core.user_files import why_unreadable


class ScriptExhausted(BackendError):
    """Every turn of the replay script has been used."""

    reason = FinishReason.SCRIPT_EXHAUSTED


def load_script(path: Path) -> list[str]:
    """The outputs of a replay script; malformed lines raise BackendError naming file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise BackendError(f"replay script not found: {path}; check the --script path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BackendError(f"cannot read replay script {path}: {why_unreadable(path, exc)}") from None
    outputs: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            turn = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BackendError(
                f"{where}: not valid JSON ({exc.msg}); each line must be one object like "
                '{"output": "<raw model text>"}'
            ) from None
        if not isinstance(turn, dict) or not isinstance(turn.get("output"), str):
            raise BackendError(
                f'{where}: expected an object with a string "output" field, got {line[:80]!r}'
            )
        outputs.append(turn["output"])
    return outputs


class ReplayBackend(Backend):
    """A Backend that streams pre-written turns."""

    name = "replay"
    generates = False

    def __init__(self, script: Path, *, chunk_size: int = 8, delay: float = 0.0) -> None:
        if chunk_size < 1:
            raise BackendError(f"chunk_size must be at least 1, got {chunk_size}")
        self.script = Path(script)
        self.chunk_size = chunk_size
        self.delay = delay
        self.last_usage: Usage | None = None
        self._outputs = load_script(self.script)
        self._next = 0
        self._cancelled = threading.Event()

    def __repr__(self) -> str:
        return f"ReplayBackend(script={str(self.script)!r}, turn={self._next}/{len(self._outputs)})"

    @property
    def turns_left(self) -> int:
        return len(self._outputs) - self._next

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the next scripted output in `chunk_size` pieces; ScriptExhausted at the end."""
        if self._next >= len(self._outputs):
            raise ScriptExhausted(
                f"replay script {self.script} exhausted: all {len(self._outputs)} turns were used"
            )
        output = self._outputs[self._next]
        self._next += 1
        self._cancelled.clear()
        started = time.monotonic()
        first: float | None = None
        sent = 0
        try:
            for chunk in paced_chunks(output, self.chunk_size, self.delay, self._cancelled):
                first = first or time.monotonic()
                sent += len(chunk)
                yield chunk
        finally:
            self.last_usage = _usage(prompt, output[:sent], started, first, time.monotonic())

    def skip(self, turns: int) -> None:
        """Move past `turns` scripted outputs without streaming them (a resumed session's log
        already holds them); past the end, the next `stream` says the script is exhausted."""
        self._next = min(self._next + max(turns, 0), len(self._outputs))

    def cancel(self) -> None:
        self._cancelled.set()

    def count_tokens(self, prompt: Prompt) -> int:
        """An estimate (see `token_estimate`): a replay has no tokenizer."""
        return estimate_prompt_tokens(prompt)

    def close(self) -> None:
        self.cancel()


def paced_chunks(
    text: str, size: int, delay: float, cancelled: threading.Event
) -> Iterator[str]:
    """`text` in pieces of `size` characters, `delay` seconds apart, until `cancelled` is set."""
    for start in range(0, len(text), size):
        if cancelled.wait(delay) if delay else cancelled.is_set():
            return
        yield text[start : start + size]


def _usage(prompt: Prompt, text: str, started: float, first: float | None, ended: float) -> Usage:
    new_tokens = estimate_text_tokens(text)
    decode = ended - first if first is not None else 0.0
    return Usage(
        prompt_tokens=estimate_prompt_tokens(prompt),
        new_tokens=new_tokens,
        time_to_first_token=(first - started) if first is not None else 0.0,
        tokens_per_second=(new_tokens - 1) / decode if new_tokens > 1 and decode > 0 else 0.0,
        estimated=True,  # no tokenizer: front ends show no tokens/s for a replay
    )
