"""Local models through transformers (+ peft LoRA, bitsandbytes 4/8-bit), streamed as they decode.

`generate` runs in a thread and feeds a `TextIteratorStreamer`; `stream()` yields its chunks, cut
at the prompt's stop strings. A stopping criterion checked after every token ends generation on a
stop string, on `cancel()`, or when the consumer stops reading. Between turns the KV cache is kept
and only the new suffix of the prompt is prefilled (see `kv_cache.PrefixCache`).

torch/transformers are imported inside methods: `from agent_core.backends.hf import HFBackend` is
cheap, the cost is paid when the model is loaded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from agent_core.backends.base import Backend, BackendError, ProgressCallback, Prompt, Usage
from agent_core.backends.faults import ContextTooLong
from agent_core.backends.hf_load import (
    LoadClock,
    describe,
    is_out_of_memory,
    load_model,
    load_tokenizer,
    out_of_memory_error,
    quantization_advice,
    quantization_config,
    resolve_weights,
    use_cpu_threads,
)
from agent_core.backends.identity import adapter_identity, tokenizer_identity, weights_identity
from agent_core.backends.kv_cache import PrefixCache
from agent_core.backends.stop_strings import StopScanner
from agent_core.backends.token_count import AddedTokenCounter
from agent_core.backends.chat_template import render_prompt


def model_window(config: Any) -> int | None:
    """The positions a model can take (`max_position_embeddings` of its config, or of its text
    model's), where the config says."""
    for source in (config, getattr(config, "text_config", None)):
        value = getattr(source, "max_position_embeddings", None)
        if isinstance(value, int) and value > 0:
            return value
    return None


class _TurnClock:
    """A transformers stopping criterion: stop on an event or a stop string; time the tokens."""

    def __init__(self, tokenizer: Any, prompt_len: int, stops: list[str], halt: threading.Event) -> None:
        self.tokenizer = tokenizer
        self.prompt_len = prompt_len
        self.stops = [s for s in stops if s]
        # A stop string of n characters spans at most n tokens (+1 for a partial leading byte).
        self.window = max((len(s) for s in self.stops), default=0) + 1
        self.halt = halt
        self.first_token_at: float | None = None

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        if self.first_token_at is None:
            self.first_token_at = time.perf_counter()
        stop = self.halt.is_set() or self._stop_string_seen(input_ids[0])
        return torch.full((input_ids.shape[0],), stop, dtype=torch.bool, device=input_ids.device)

    def _stop_string_seen(self, ids: Any) -> bool:
        if not self.stops:
            return False
        tail = ids[max(self.prompt_len, ids.shape[0] - self.window) :].tolist()
        text = self.tokenizer.decode(tail, skip_special_tokens=True)
        return any(stop in text for stop in self.stops)


class HFBackend(Backend):
    """A Backend running a local transformers model, optionally with a LoRA adapter."""

    name = "hf"
    window_source = "the model's own window (max_position_embeddings in its config)"

    def __init__(
        self,
        model: str,
        *,
        adapter: str | None = None,
        load_in_4bit: bool = False,
        load_in_8bit: bool = False,
        dtype: str = "auto",
        device_map: str | dict | None = "auto",
        merge_adapter: bool = False,
        enable_thinking: bool | None = None,
        reuse_cache: bool = True,
        progress: ProgressCallback | None = None,
        threads: int | None = None,
    ) -> None:
        """`threads`: torch threads when the model runs on CPU (see `hf_load.cpu_threads`).
        8-bit weights load with float16 activations unless `dtype` says otherwise: bitsandbytes
        casts anything else to float16 on every layer call, and warns each time."""
        self.model_ref = model
        self.adapter_ref = adapter
        self.enable_thinking = enable_thinking
        self.quantized = load_in_4bit or load_in_8bit
        self.label = describe(model, adapter)
        clock = LoadClock(progress)
        clock.report("resolving")
        model, adapter = resolve_weights(model, adapter)
        self._resolved = (model, adapter)
        self._identity: dict[str, Any] | None = None
        quantization = quantization_config(load_in_4bit, load_in_8bit)
        # Lines for the user (the session shows them as notices when it starts).
        self._notices: list[str] = []
        advice = quantization_advice(load_in_4bit, load_in_8bit)
        if advice:
            self._notices.append(advice)
        if load_in_8bit and dtype == "auto":
            dtype = "float16"
        self.model: Any = load_model(
            model,
            adapter=adapter,
            quantization=quantization,
            dtype=dtype,
            device_map=device_map,
            merge_adapter=merge_adapter,
            clock=clock,
        )
        # Its own window: a session fits its prompts to it (`turn_retry.fit_server_window`)
        self.context_window = model_window(self.model.config)
        clock.report("tokenizer")
        self.tokenizer = load_tokenizer(model, adapter)
        if self.model.device.type == "cpu":
            self._notices.append(use_cpu_threads(threads))
        clock.report("ready")
        self.last_usage: Usage | None = None
        self.last_rendered: str | None = None  # the text of the last prompt, template applied
        self._prefix = PrefixCache(self._new_cache, enabled=reuse_cache)
        self._halt = threading.Event()
        self._busy = threading.Lock()
        self._added = AddedTokenCounter(self.tokenizer, self._template_kwargs())

    @property
    def notices(self) -> list[str]:
        """Advice on quantization and CPU threads, shown when the session starts."""
        return self._notices

    def __repr__(self) -> str:
        return f"HFBackend({self.label!r})"

    def _new_cache(self) -> Any:
        from transformers import DynamicCache

        return DynamicCache(config=self.model.config)

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model reads it (`render_prompt`)."""
        return render_prompt(self.tokenizer, prompt, self._template_kwargs(), self.label)

    def prompt_ids(self, prompt: Prompt) -> list[int]:
        """Token ids of the rendered prompt (the template's text encoded with no added tokens,
        as `apply_chat_template(tokenize=True)` does it)."""
        return self.tokenizer.encode(self.render(prompt), add_special_tokens=False)

    def identity(self) -> dict[str, Any]:
        """Model, adapter, tokenizer and chat template as loaded, and the generation settings."""
        if self._identity is None:
            model, adapter = self._resolved
            config = self.model.generation_config
            self._identity = {
                "backend": self.name,
                "model": weights_identity(self.model_ref, model),
                "adapter": adapter_identity(self.adapter_ref or adapter, adapter) if adapter else None,
                "tokenizer": tokenizer_identity(self.tokenizer),
                "generation": {
                    "do_sample": bool(config.do_sample),
                    **{k: getattr(config, k, None)
                       for k in ("temperature", "top_p", "top_k", "repetition_penalty")},
                    "enable_thinking": self.enable_thinking,
                    "quantized": self.quantized,
                    "dtype": str(self.model.dtype).removeprefix("torch."),
                },
            }
        return self._identity

    def _template_kwargs(self) -> dict[str, Any]:
        return {} if self.enable_thinking is None else {"enable_thinking": self.enable_thinking}

    def count_tokens(self, prompt: Prompt) -> int:
        return len(self.prompt_ids(prompt))

    def count_added_tokens(self, before: Prompt, after: Prompt) -> int:
        """Tokens `after` adds to `before` (encoding only the added text when it extends it)."""
        added = self._added.count(before, after)
        return added if added is not None else self.count_tokens(after) - self.count_tokens(before)

    def cancel(self) -> None:
        self._halt.set()

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the reply in chunks; `last_usage` is set when the turn ends (cancelled or not)."""
        self.last_rendered = self.render(prompt)
        ids = self.tokenizer.encode(self.last_rendered, add_special_tokens=False)
        if self.context_window and len(ids) + prompt.max_new_tokens > self.context_window:
            raise ContextTooLong(
                f"{self.label} takes at most {self.context_window} tokens "
                f"(max_position_embeddings in its config.json): the prompt is {len(ids)} and the "
                f"reply may add {prompt.max_new_tokens}; lower --max-new-tokens or use a model "
                "with a larger window", self.context_window, len(ids), refused_by="the model")
        if not self._busy.acquire(blocking=False):
            raise BackendError("the model is already generating: cancel that turn first")
        try:
            self._halt.clear()
            yield from self._generate(ids, prompt)
        finally:
            self._halt.set()
            self._busy.release()

    def _generate(self, ids: list[int], prompt: Prompt) -> Iterator[str]:
        import torch
        from transformers import StoppingCriteriaList, TextIteratorStreamer

        started = time.perf_counter()
        cache, cached = self._prefix.prepare(ids)
        clock = _TurnClock(self.tokenizer, len(ids), prompt.stop_after + prompt.stop_before, self._halt)
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        inputs = torch.tensor([ids], device=self.model.device)
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                outcome["sequence"] = self.model.generate(
                    input_ids=inputs,
                    attention_mask=torch.ones_like(inputs),
                    max_new_tokens=prompt.max_new_tokens,
                    streamer=streamer,
                    stopping_criteria=StoppingCriteriaList([clock]),
                    cache=cache,
                    pad_token_id=self.tokenizer.pad_token_id,
                )[0].tolist()
            except BaseException as exc:  # re-raised in the consumer's thread below
                outcome["error"] = exc
                streamer.end()

        worker = threading.Thread(target=run, name="hf-generate", daemon=True)
        worker.start()
        scanner = StopScanner(prompt.stop_after, prompt.stop_before)
        try:
            for chunk in streamer:
                if self._halt.is_set():
                    break
                piece = scanner.feed(chunk)
                if piece:
                    yield piece
                if scanner.done:
                    break
            else:
                tail = scanner.flush()
                if tail:
                    yield tail
        finally:
            self._halt.set()
            worker.join()
            self._finish_turn(ids, cached, started, clock, outcome)

    def _finish_turn(
        self, ids: list[int], cached: int, started: float, clock: _TurnClock, outcome: dict[str, Any]
    ) -> None:
        error = outcome.get("error")
        if error is not None:
            self._prefix.reset()
            if is_out_of_memory(error):
                self._free_accelerator_memory()
                raise out_of_memory_error(
                    f"generating from a {len(ids)}-token prompt", self.quantized
                ) from None
            raise error
        sequence: list[int] = outcome["sequence"]
        self._prefix.store(sequence)
        ended = time.perf_counter()
        new_tokens = len(sequence) - len(ids)
        first = clock.first_token_at or ended
        decode_time = ended - first
        self.last_usage = Usage(
            prompt_tokens=len(ids),
            new_tokens=new_tokens,
            cached_tokens=cached,
            time_to_first_token=first - started,
            tokens_per_second=(new_tokens - 1) / decode_time if new_tokens > 1 and decode_time > 0 else 0.0,
        )

    def _free_accelerator_memory(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def close(self) -> None:
        """Drop the model and its cache so their memory can be reclaimed."""
        import gc

        self.cancel()
        self._prefix.reset()
        self.model = None
        gc.collect()
        self._free_accelerator_memory()
