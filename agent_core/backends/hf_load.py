"""Load a local model for the hf backend: base + optional LoRA, 4/8-bit, with errors that say the fix.

torch, transformers, peft and bitsandbytes are imported inside the functions, so importing this
module costs nothing until a model is actually loaded.
"""

from __future__ import annotations

import logging
import os
import shlex
import time
import warnings
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_core.backends.base import BackendError, LoadProgress, ProgressCallback

BNB_KERNEL_WARNING = "Failed to load CPU gemm_4bit_forward"
# bitsandbytes warns this on every 8-bit layer call when activations are not float16 (27,216
# lines in an 84 s CPU run); 8-bit loads in float16, and the warning is filtered besides.
BNB_CAST_WARNING = "MatMul8bitLt: inputs will be cast from"
MEMORY_ERROR_MARKERS = ("out of memory", "can't allocate memory", "not enough memory")
THREADS_ENV = "NAVTUI_THREADS"
# Measured on CPU with Qwen2.5-Coder-0.5B-Instruct (issue 14): bitsandbytes dequantizes on the fly,
# so on CPU the quantized weights cost more memory and time than bf16 ones.
CPU_QUANTIZATION_WARNING = (
    "{flag} on CPU uses more memory and is slower than plain bf16 weights here: measured peak "
    "RSS 1.5 GB bf16, 2.5 GB 4-bit, 3.5 GB 8-bit, and 10.3 s to the first token in 4-bit vs "
    "1.7 s in bf16 (Qwen2.5-Coder-0.5B). Drop {flag} on a machine without a GPU."
)


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


def quiet_bitsandbytes() -> None:
    """Hide bitsandbytes' harmless log lines: the import-time one about optional CPU kernels and
    the per-call 8-bit cast warning (exactly those messages; others still show)."""
    for name, prefix in (
        ("bitsandbytes.backends.cpu.ops", BNB_KERNEL_WARNING),
        ("bitsandbytes.autograd._functions", BNB_CAST_WARNING),
    ):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropMessage) and f.prefix == prefix for f in logger.filters):
            logger.addFilter(_DropMessage(prefix))


# Libraries whose log lines (and Python warnings) must not reach a full-screen app's terminal.
LIBRARY_LOGGERS = ("bitsandbytes", "transformers", "peft", "accelerate", "torch", "py.warnings")
_library_log: logging.Handler | None = None


def library_logs_to(path: Path) -> None:
    """Send the ML libraries' log lines and Python warnings to `path` instead of stderr.

    For the Textual app, which owns the terminal: bitsandbytes' and transformers' lines would
    otherwise be buffered and dumped on the terminal when the app exits.
    """
    global _library_log
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.captureWarnings(True)
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.propagate = False
    _library_log = handler
    _quiet_transformers_handler()


def _quiet_transformers_handler() -> None:
    """transformers writes through its own stderr handler; swap it for the log file, if set."""
    import sys

    if _library_log is None or "transformers" not in sys.modules:
        return
    from transformers.utils import logging as hf_logging

    hf_logging.disable_default_handler()
    if _library_log not in logging.getLogger("transformers").handlers:
        hf_logging.add_handler(_library_log)


def physical_cores() -> int:
    """Physical CPU cores this process may use (hyper-threads not counted)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    usable = usable or 1
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return usable
    cores, physical = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "physical id":
            physical = value.strip()
        elif key.strip() == "core id":
            cores.add((physical, value.strip()))
    return max(1, min(usable, len(cores) or usable))


def cpu_threads(requested: int | None = None) -> tuple[int, str]:
    """The torch thread count for CPU decoding and where it came from.

    `--threads N` wins, then $NAVTUI_THREADS, then the number of physical cores (torch's own
    default counts hyper-threads, and decoding collapsed to 0.1-0.5 tok/s under load with it).
    `navtui doctor` shows this.
    """
    if requested is not None:
        return max(1, requested), "--threads"
    env = os.environ.get(THREADS_ENV, "").strip()
    if env:
        try:
            return max(1, int(env)), f"${THREADS_ENV}"
        except ValueError:
            raise BackendError(f"${THREADS_ENV}={env!r} is not a whole number; fix or unset it") from None
    return physical_cores(), "physical cores"


def use_cpu_threads(requested: int | None = None) -> str:
    """Set torch's CPU threads (see `cpu_threads`); the line that says so."""
    import torch

    threads, source = cpu_threads(requested)
    torch.set_num_threads(threads)
    return f"CPU decoding with {threads} torch thread(s) ({source}; change with --threads N)"


def on_gpu() -> bool:
    """True when a CUDA/ROCm or Apple GPU is there for the model."""
    import torch

    mps = getattr(torch.backends, "mps", None)
    return torch.cuda.is_available() or bool(mps and mps.is_available())


def quantization_advice(load_in_4bit: bool, load_in_8bit: bool) -> str | None:
    """A warning when 4/8-bit was asked for on a machine without a GPU, else None."""
    if not (load_in_4bit or load_in_8bit) or on_gpu():
        return None
    return CPU_QUANTIZATION_WARNING.format(flag="--load-in-4bit" if load_in_4bit else "--load-in-8bit")


def fetch_hint(repo_id: str) -> str:
    """The commands that download `repo_id` into the Hugging Face cache."""
    quoted = shlex.quote(repo_id)
    return f"`hf download {quoted}` (older huggingface_hub: `huggingface-cli download {quoted}`)"


def _is_path_like(ref: str) -> bool:
    return ref.startswith(("/", ".", "~")) or ref.count("/") > 1 or Path(ref).expanduser().exists()


class LoadClock:
    """Reports load phases with the seconds since loading began (nothing without a callback)."""

    def __init__(self, callback: ProgressCallback | None) -> None:
        self.callback = callback
        self.started = time.monotonic()

    def report(self, phase: str, done: int = 0, total: int = 0) -> None:
        if self.callback is not None:
            self.callback(LoadProgress(phase, done, total, time.monotonic() - self.started))


@contextmanager
def counting_weights(clock: LoadClock, phase: str) -> Iterator[None]:
    """While loading, report transformers' loop over the checkpoint's tensors as `phase` n/N.

    transformers walks the tensors through the `tqdm` of `transformers.core_model_loading`
    (a no-op bar: progress bars are off); it is swapped for a counting one meanwhile. With
    another transformers layout nothing is swapped and the phase is reported without a count.
    """
    loading: Any
    try:
        from transformers import core_model_loading as loading
    except ImportError:
        loading = None
    original = getattr(loading, "tqdm", None)
    clock.report(phase)
    if original is None or clock.callback is None:
        yield
        return

    def counted(iterable: Iterable[Any], *args: Any, **kwargs: Any) -> Iterator[Any]:
        total = len(iterable) if isinstance(iterable, Sized) else 0
        every = max(1, total // 100)
        for done, item in enumerate(iterable, 1):
            yield item
            if done % every == 0 or done == total:
                clock.report(phase, done, total)

    loading.tqdm = counted
    try:
        yield
    finally:
        loading.tqdm = original


# --- finding the weights before loading anything ------------------------------------------------

OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
HUB_PROBE_TIMEOUT = 2.0
# The file each kind of checkpoint cannot do without.
MARKER_FILES = {"model": "config.json", "adapter": "adapter_config.json"}


def offline_reason(timeout: float = HUB_PROBE_TIMEOUT) -> str | None:
    """Why the Hugging Face Hub cannot be used now (an offline variable, or no answer within
    `timeout` s), or None when it answers."""
    for name in OFFLINE_ENV:
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{name} is set"
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    if not hub_reachable(endpoint, timeout):
        return f"{endpoint} did not answer within {timeout:g} s"
    return None


def hub_reachable(endpoint: str, timeout: float) -> bool:
    """A TCP connection to `endpoint` opens within `timeout` s (name lookup included)."""
    import socket
    import threading
    from urllib.parse import urlsplit

    url = urlsplit(endpoint)
    address = (url.hostname or "", url.port or (80 if url.scheme == "http" else 443))
    opened = threading.Event()

    def connect() -> None:
        try:
            socket.create_connection(address, timeout=timeout).close()
            opened.set()
        except OSError:
            pass

    probe = threading.Thread(target=connect, daemon=True, name="navtui-hub-probe")
    probe.start()
    probe.join(timeout)
    return opened.is_set()


def cached_snapshot(repo_id: str, what: str) -> str | None:
    """The local snapshot folder of `repo_id` in the Hugging Face cache, if it holds a `what`."""
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(repo_id, local_files_only=True)
    except (OSError, ValueError):
        return None
    return folder if (Path(folder) / MARKER_FILES[what]).is_file() else None


def missing_weights_error(missing: list[tuple[str, str]], reason: str) -> BackendError:
    names = " and ".join(f"{what} {ref}" for what, ref in missing)
    commands = " and ".join(f"`hf download {shlex.quote(ref)}`" for _, ref in missing)
    legacy = "; ".join(f"huggingface-cli download {shlex.quote(ref)}" for _, ref in missing)
    return BackendError(
        f"{names} {'is' if len(missing) == 1 else 'are'} not on this machine and cannot be "
        f"downloaded now ({reason}). Fetch {'it' if len(missing) == 1 else 'them'} while online "
        f"with {commands} (older huggingface_hub: {legacy}), or pass local directories."
    )


def resolve_weights(model: str, adapter: str | None) -> tuple[str, str | None]:
    """Check that base and adapter can be had before anything loads; returns what to load.

    Offline (an offline variable, or the Hub does not answer in 2 s), Hub ids are replaced by
    their cached snapshot folders, so nothing waits on the network; one error lists every
    missing checkpoint with its download command. Online, ids are kept (fetched on first use).
    """
    hub = [(what, ref) for what, ref in (("model", model), ("adapter", adapter))
           if ref and not _is_path_like(ref)]
    if not hub:
        return model, adapter
    snapshots = {ref: cached_snapshot(ref, what) for what, ref in hub}
    reason = offline_reason()
    if reason is None:
        return model, adapter
    missing = [(what, ref) for what, ref in hub if snapshots[ref] is None]
    if missing:
        raise missing_weights_error(missing, reason)
    return snapshots.get(model) or model, (snapshots.get(adapter) or adapter) if adapter else None


def _not_found(ref: str, what: str, exc: BaseException) -> BackendError:
    if _is_path_like(ref):
        return BackendError(f"cannot load {what} from {ref}: {exc}; check the path")
    if "not a valid model identifier" in str(exc) or "Repository Not Found" in str(exc):
        return BackendError(f"no {what} named {ref!r} on the Hugging Face Hub or on disk; check the name")
    return BackendError(
        f"{what} {ref!r} is not on this machine and could not be downloaded (offline?). "
        f"Fetch it while online with {fetch_hint(ref)}, or pass a local directory."
    )


def is_out_of_memory(exc: BaseException) -> bool:
    """True for CUDA/MPS out-of-memory errors and failed CPU allocations."""
    import torch

    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, (RuntimeError, MemoryError)) and any(
        marker in str(exc).lower() for marker in MEMORY_ERROR_MARKERS
    )


def out_of_memory_error(doing: str, quantized: bool) -> BackendError:
    """The error for an out-of-memory failure, with what helps on this machine."""
    if not on_gpu():
        fix = (
            "on CPU, 4/8-bit weights take more memory than bf16 (measured peak RSS 1.5 GB bf16, "
            "2.5 GB 4-bit, 3.5 GB 8-bit): drop --load-in-4bit/--load-in-8bit, "
            if quantized
            else "on CPU, 4/8-bit weights do not help (they take more memory than bf16): "
        ) + "use a smaller model, lower --max-new-tokens, or close other programs"
    elif quantized:
        fix = "use a smaller model or free memory (other processes on the GPU: `nvidia-smi`)"
    else:
        fix = "retry with --load-in-4bit (nf4 weights take about a quarter of their bf16 size)"
    return BackendError(f"out of memory {doing}: {fix}")


def quantization_config(load_in_4bit: bool, load_in_8bit: bool) -> Any:
    """A BitsAndBytesConfig for 4-bit nf4 (double quant, bf16 compute) or 8-bit, else None."""
    if load_in_4bit and load_in_8bit:
        raise BackendError("choose one of --load-in-4bit and --load-in-8bit, not both")
    if not (load_in_4bit or load_in_8bit):
        return None
    flag = "--load-in-4bit" if load_in_4bit else "--load-in-8bit"
    quiet_bitsandbytes()
    try:
        import bitsandbytes  # noqa: F401
    except ImportError:
        raise BackendError(
            f"{flag} needs bitsandbytes: run `pip install 'bitsandbytes>=0.46'` "
            "(0.46 and later also run on CPU), or drop the flag"
        ) from None
    import torch
    from transformers import BitsAndBytesConfig

    if load_in_8bit:
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )


def _has_tokenizer(ref: str | None) -> bool:
    return ref is not None and (Path(ref).expanduser() / "tokenizer_config.json").is_file()


def load_tokenizer(model: str, adapter: str | None) -> Any:
    """The adapter's own tokenizer when its directory has one, else the base model's."""
    from transformers import AutoTokenizer

    source = adapter if adapter is not None and _has_tokenizer(adapter) else model
    try:
        return AutoTokenizer.from_pretrained(source)
    except OSError as exc:
        raise _not_found(source, "model", exc) from None


def adapter_base(adapter: str) -> str | None:
    """The base model an adapter says it was trained on (adapter_config.json), if it says."""
    from peft import PeftConfig

    try:
        config = PeftConfig.from_pretrained(adapter)
    except (OSError, ValueError) as exc:
        raise _not_found(adapter, "adapter", exc) from None
    return config.base_model_name_or_path


def attach_adapter(model: Any, base: str, adapter: str) -> Any:
    """Wrap `model` with the LoRA `adapter`; a shape or module mismatch names the adapter's base."""
    from peft import PeftModel

    trained_on = adapter_base(adapter)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # peft calling deprecated transformers API
            return PeftModel.from_pretrained(model, adapter)
    except OSError as exc:
        raise _not_found(adapter, "adapter", exc) from None
    except (RuntimeError, ValueError) as exc:
        text = str(exc)
        if "size mismatch" not in text and "Target module" not in text:
            raise
        hint = f"pass --model {trained_on}" if trained_on else "pass the base model it was trained on"
        raise BackendError(
            f"adapter {adapter} does not fit base {base}: it was made for {trained_on or 'another base'} "
            f"({text.splitlines()[0][:160]}); {hint}"
        ) from None


def load_model(
    model: str,
    *,
    adapter: str | None,
    quantization: Any,
    dtype: str,
    device_map: str | dict | None,
    merge_adapter: bool,
    clock: LoadClock | None = None,
) -> Any:
    """Load base (+ adapter, merged when asked) ready for generation, reporting to `clock`."""
    clock = clock or LoadClock(None)
    clock.report("importing transformers")
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    if merge_adapter and quantization is not None:
        raise BackendError(
            "merging an adapter needs full-precision weights: drop --load-in-4bit/--load-in-8bit, "
            "or keep the adapter unmerged (merge_adapter=False)"
        )
    quiet_bitsandbytes()  # transformers and peft import it whenever it is installed
    _quiet_transformers_handler()
    hf_logging.disable_progress_bar()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    kwargs: dict[str, Any] = {"dtype": dtype, "device_map": device_map}
    if quantization is not None:
        kwargs["quantization_config"] = quantization
    phase = "loading and quantizing weights" if quantization is not None else "loading weights"
    try:
        with counting_weights(clock, phase):
            loaded = AutoModelForCausalLM.from_pretrained(model, **kwargs)
        if adapter is not None:
            clock.report("adapter")
            loaded = attach_adapter(loaded, model, adapter)
            if merge_adapter:
                clock.report("merging the adapter")
                loaded = loaded.merge_and_unload()
    except OSError as exc:
        raise _not_found(model, "model", exc) from None
    except BackendError:
        raise
    except Exception as exc:
        if is_out_of_memory(exc):
            raise out_of_memory_error(f"loading {model}", quantization is not None) from None
        raise
    loaded.eval()
    return loaded


def describe(model: str, adapter: str | None) -> str:
    """Short label for status lines: base name plus adapter name (and the version a
    `navtui finetune` adapter's manifest gives)."""
    from agent_core.backends.identity import adapter_label

    label = Path(model).name if _is_path_like(model) else model
    if adapter:
        name = Path(adapter).name if _is_path_like(adapter) else adapter
        label += " + " + adapter_label(adapter, name)
    return label
