"""Device-aware loading: CPU threads, honest 4/8-bit advice on CPU, a quiet 8-bit run, and
library log lines kept off the full-screen app's terminal."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_core.backends.base import BackendError
from agent_core.backends.hf_load import (
    cpu_threads,
    on_gpu,
    out_of_memory_error,
    physical_cores,
    quantization_advice,
)
from tests.test_cli import ISSUE, navtui

ROOT = Path(__file__).resolve().parent.parent
cpu_only = pytest.mark.skipif(on_gpu(), reason="CPU advice is only given without a GPU")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        cwd=ROOT, timeout=300, env={**os.environ, **env},
    )


def test_threads_come_from_the_flag_then_the_environment_then_physical_cores(monkeypatch):
    monkeypatch.delenv("NAVTUI_THREADS", raising=False)
    assert cpu_threads(3) == (3, "--threads")
    assert cpu_threads() == (physical_cores(), "physical cores")
    assert 1 <= physical_cores() <= (os.cpu_count() or 1)
    monkeypatch.setenv("NAVTUI_THREADS", "5")
    assert cpu_threads() == (5, "$NAVTUI_THREADS")
    assert cpu_threads(2) == (2, "--threads")
    monkeypatch.setenv("NAVTUI_THREADS", "many")
    with pytest.raises(BackendError, match="NAVTUI_THREADS='many' is not a whole number"):
        cpu_threads()


@cpu_only
def test_quantization_on_cpu_is_warned_about_with_the_measured_reason():
    assert quantization_advice(False, False) is None
    advice = quantization_advice(True, False)
    assert "--load-in-4bit on CPU" in advice and "2.5 GB 4-bit" in advice and "10.3 s" in advice
    assert "--load-in-8bit on CPU" in quantization_advice(False, True)


@cpu_only
def test_out_of_memory_on_cpu_does_not_advise_4bit():
    plain = str(out_of_memory_error("loading m", quantized=False))
    assert "retry with --load-in-4bit" not in plain and "do not help" in plain
    quantized = str(out_of_memory_error("loading m", quantized=True))
    assert "drop --load-in-4bit/--load-in-8bit" in quantized and "3.5 GB 8-bit" in quantized


def test_the_cast_warning_is_filtered_and_nothing_else():
    result = run_python("""
        import logging
        from agent_core.backends.hf_load import quiet_bitsandbytes
        quiet_bitsandbytes()
        log = logging.getLogger("bitsandbytes.autograd._functions")
        for _ in range(100):
            log.warning("MatMul8bitLt: inputs will be cast from %s to float16 during quantization",
                        "torch.bfloat16")
        log.warning("something else went wrong")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["something else went wrong"]


def test_an_8bit_generation_in_bfloat16_writes_almost_nothing_to_stderr(tiny_model_dir):
    """bf16 activations make bitsandbytes warn on every layer call; the filter keeps it quiet."""
    result = run_python(f"""
        from agent_core.backends.base import Prompt
        from agent_core.backends.hf import HFBackend
        backend = HFBackend({str(tiny_model_dir)!r}, load_in_8bit=True, dtype="bfloat16", threads=1)
        text = "".join(backend.stream(Prompt(text="hello", max_new_tokens=16)))
        print(backend.last_usage.new_tokens)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["16"]
    assert len(result.stderr.splitlines()) < 20, result.stderr[-2000:]


def test_an_8bit_run_of_navtui_writes_under_20_lines_to_stderr(git_repo, tiny_model_dir):
    result = navtui(
        "--auto", "--json", "--backend", "hf", "--model", str(tiny_model_dir), "--dialect",
        "toolcall", "--load-in-8bit", "--max-new-tokens", "24", "--threads", "1",
        "--issue", ISSUE, str(git_repo),
    )
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) < 20, result.stderr[-2000:]
    assert '"CPU decoding with 1 torch thread(s) (--threads' in result.stdout
    if not on_gpu():
        assert "--load-in-8bit on CPU uses more memory" in result.stdout


def test_library_log_lines_go_to_the_file_not_the_terminal(tmp_path):
    log = tmp_path / "library.log"
    result = run_python(f"""
        import logging, warnings
        from pathlib import Path
        from agent_core.backends.hf_load import library_logs_to, quiet_bitsandbytes
        library_logs_to(Path({str(log)!r}))
        import transformers
        from agent_core.backends.hf_load import _quiet_transformers_handler
        _quiet_transformers_handler()
        transformers.utils.logging.get_logger("transformers.modeling_utils").warning("hf says hi")
        logging.getLogger("bitsandbytes.cextension").warning("bnb says hi")
        warnings.warn("a python warning")
    """)
    assert result.returncode == 0
    assert result.stderr == ""
    text = log.read_text()
    assert "hf says hi" in text and "bnb says hi" in text and "a python warning" in text


@cpu_only
def test_doctor_shows_the_cpu_threads_navtui_will_use(tmp_path):
    from tests.test_doctor import doctor, lines_after
    from tests.test_model_errors import hf_env

    env = {**hf_env(tmp_path), "NAVTUI_THREADS": "3"}
    result = doctor(env)
    torch_lines = "\n".join(lines_after(result.stdout, "torch"))
    assert "decoding threads: 3 ($NAVTUI_THREADS" in torch_lines
    assert "--load-in-4bit/8bit take more memory and time than bf16" in torch_lines
