"""`navtui doctor`: what this machine has for navtui, one small check function per topic.

A check takes the `Context` and returns `Check`s; adding a topic is adding a function to
`CHECKS`. Nothing here loads a model or needs the `local` extra: torch is imported only when
installed, and a missing package is a finding, not a crash.
"""

from __future__ import annotations

import importlib.util
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from agent_core.backends.hf_spec import LOCAL_INSTALL
from app.config import Config, ConfigError, load_config

MARKS = {"ok": "✓", "warn": "!", "fail": "✗", "info": "·"}


@dataclass
class Check:
    """One finding: `status` is ok, warn (works, with a limit), fail (will not work) or info."""

    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)


@dataclass
class Context:
    """What the checks share: the config file (or why it is unusable) and the network timeout."""

    config: Config | None
    config_error: str | None
    timeout: float

    def setting(self, key: str) -> object:
        return self.config.options.get(key) if self.config else None


def version_of(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def check_python(context: Context) -> list[Check]:
    version = platform.python_version()
    status = "ok" if sys.version_info >= (3, 11) else "fail"
    return [Check("python", status, f"{version} ({sys.executable})",
                  [] if status == "ok" else ["navtui needs Python 3.11 or later"])]


def check_config(context: Context) -> list[Check]:
    from app.config import config_path

    path = config_path()
    if context.config_error:
        return [Check("config", "fail", str(path), [context.config_error])]
    if context.config is None or not context.config.exists:
        return [Check("config", "info", f"no file at {path} (built-in defaults)",
                      ["`navtui config edit` creates one"])]
    from app.keymap import check_keymap

    try:
        check_keymap(context.config)
    except ConfigError as error:
        return [Check("config", "fail", str(path), [str(error)])]
    settings = ", ".join(f"{key} = {value}" for key, value in context.config.options.items())
    return [Check("config", "ok", f"{path} is valid", [settings] if settings else [])]


def local_extra() -> str:
    """How to install the `local` extra: plainly once torch is there (without torch it would
    pull the multi-GB CUDA build), else torch's build first."""
    if importlib.util.find_spec("torch") is not None:
        return "`pip install 'navtui[local]'`"
    return f"install {LOCAL_INSTALL}"


def check_torch(context: Context) -> list[Check]:
    if importlib.util.find_spec("torch") is None:
        return [Check("torch", "warn", "not installed: the hf backend (a model on this machine) "
                      "needs it; the demo, replay and servers work", [f"install {LOCAL_INSTALL}"])]
    import torch

    details = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            free, total = torch.cuda.mem_get_info(index)
            details.append(f"cuda:{index} {torch.cuda.get_device_name(index)}: "
                           f"{free / 2**30:.1f} GiB free of {total / 2**30:.1f} GiB")
        where = f"CUDA {torch.version.cuda}"
    elif getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        where = "Apple MPS"
    else:
        where = "CPU only (no GPU found): small models only, or use a server"
        details += cpu_details(context, torch.get_num_threads())
    return [Check("torch", "ok", f"{torch.__version__}, {where}", details)]


def cpu_details(context: Context, torch_default: int) -> list[str]:
    """The threads the hf backend will decode with on CPU, and why 4/8-bit does not pay here."""
    from agent_core.backends.base import BackendError
    from agent_core.backends.hf_load import cpu_threads

    setting = context.setting("threads")
    try:
        threads, source = cpu_threads(setting if isinstance(setting, int) else None)
    except BackendError as error:
        return [str(error)]
    return [
        f"decoding threads: {threads} ({source}; torch's default here: {torch_default}); "
        "--threads N or NAVTUI_THREADS to change",
        "on CPU --load-in-4bit/8bit take more memory and time than bf16: leave them off",
    ]


def check_local_packages(context: Context) -> list[Check]:
    checks = []
    for package in ("transformers", "peft", "accelerate"):
        version = version_of(package)
        checks.append(Check(package, "ok", version) if version else
                      Check(package, "warn", f"not installed: {local_extra()}"))
    bnb = version_of("bitsandbytes")
    checks.append(Check("bitsandbytes", "ok", f"{bnb} (--load-in-4bit / --load-in-8bit)") if bnb else
                  Check("bitsandbytes", "warn", "not installed: --load-in-4bit/8bit need it; "
                        + local_extra()))
    return checks


def check_models(context: Context) -> list[Check]:
    """Each preset (and a configured Hub model): what the Hugging Face cache holds, how to fetch."""
    from agent_core.backends.presets import PRESETS

    wanted: list[tuple[str, str, str | None]] = [
        (preset.name, preset.base, preset.adapter) for preset in PRESETS.values()]
    model, adapter = context.setting("model"), context.setting("adapter")
    if isinstance(model, str) and model.lower() not in PRESETS and model.count("/") == 1:
        wanted.append((f"{model} (config)", model, adapter if isinstance(adapter, str) else None))
    if importlib.util.find_spec("huggingface_hub") is None:
        return [Check(name, "info", "cannot look in the Hugging Face cache without "
                      "huggingface_hub (comes with navtui[local])",
                      [f"hf download {ref}" for ref in (base, lora) if ref])
                for name, base, lora in wanted]
    from agent_core.backends.hf_load import cached_snapshot

    checks = []
    for name, base, lora in wanted:
        parts = [("model", base), *([("adapter", lora)] if lora else [])]
        missing = [ref for what, ref in parts if cached_snapshot(ref, what) is None]
        held = [f"{what} {ref}: cached" for what, ref in parts if ref not in missing]
        fetch = [f"hf download {ref}" for ref in missing]
        status = "info" if missing else "ok"
        summary = "base and adapter cached" if not missing else f"{len(missing)} to download"
        checks.append(Check(name, status, summary, held + fetch))
    return checks


def check_server(context: Context) -> list[Check]:
    """The configured `base_url` answers `/models` within the timeout."""
    base_url = context.setting("base_url")
    if not isinstance(base_url, str):
        return [Check("server", "info", "no base_url in the config file (nothing to reach)")]
    import httpx

    url = base_url.rstrip("/") + "/models"
    try:
        response = httpx.get(url, timeout=context.timeout)
    except httpx.HTTPError as error:
        return [Check("server", "fail", f"{base_url} unreachable: {type(error).__name__}",
                      [str(error) or "no answer", "start the server, or fix base_url"])]
    if response.status_code != 200:
        return [Check("server", "fail", f"{url} answered HTTP {response.status_code}",
                      ["check base_url (usually ends in /v1) and the API key"])]
    try:
        served = [entry.get("id") for entry in response.json().get("data", [])]
    except (ValueError, AttributeError):
        served = []
    return [Check("server", "ok", f"{base_url} answers",
                  [f"serves: {', '.join(map(str, served))}"] if served else [])]


def check_sandbox_here(context: Context) -> list[Check]:
    """Whether bash can run in the bubblewrap sandbox (`--sandbox`), started once for real."""
    from agent_core.executor.sandbox import Bubblewrap, SandboxError, check_sandbox

    found = check_sandbox()
    if found.available and found.bwrap:
        exposed = context.setting("expose")
        expose = tuple(Path(str(p)) for p in (exposed if isinstance(exposed, list) else []))
        try:
            launcher = Bubblewrap(Path.cwd(), found.bwrap, expose=expose)
        except SandboxError as error:
            return [Check("sandbox", "fail", f"{found.reason}, but the config's `expose` cannot "
                          "be used: sessions will refuse to start", [str(error)])]
        return [Check("sandbox", "ok", found.reason, launcher.summary())]
    required = context.setting("sandbox") == "on"
    meaning = ("`sandbox = \"on\"` in the config: sessions will refuse to start" if required else
               "`--sandbox auto` runs commands unsandboxed here (the repo is still checkpointed, "
               "the rest of the machine is not protected)")
    return [Check("sandbox", "fail" if required else "warn", "not available", [found.reason, meaning])]


CHECKS: list[Callable[[Context], list[Check]]] = [
    check_python,
    check_config,
    check_torch,
    check_local_packages,
    check_models,
    check_server,
    check_sandbox_here,
]


def collect(timeout: float) -> list[Check]:
    """Every check's findings, in `CHECKS` order."""
    from app.args import batch_parser, build_parser

    try:
        context = Context(load_config(build_parser(), also=(batch_parser(),)), None, timeout)
    except ConfigError as error:
        context = Context(None, str(error), timeout)
    return [check for run in CHECKS for check in run(context)]


def run_checks(timeout: float = 2.0) -> int:
    """Print the findings; exit code 1 when any check failed."""
    checks = collect(timeout)
    width = max(len(check.name) for check in checks)
    for check in checks:
        print(f"{MARKS[check.status]} {check.name.ljust(width)}  {check.summary}")
        for detail in check.details:
            print(f"  {' ' * width}    {detail}")
    return 1 if any(check.status == "fail" for check in checks) else 0
