"""Errors the user must act on, each produced for real and each saying the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_core.backends.base import BackendError
from agent_core.backends.hf import HFBackend

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    merged = {**os.environ, **(env or {})}
    merged["PYTHONPATH"] = os.pathsep.join(filter(None, [merged.get("PYTHONPATH", ""), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=merged,
        cwd=ROOT,
        timeout=240,
    )


def test_offline_missing_weights_print_the_download_command(tmp_path, tiny_model_dir):
    """Also loads 4-bit in the same process: bitsandbytes' kernel warning must not show."""
    code = f"""
        from agent_core.backends.base import BackendError, Prompt
        from agent_core.backends.hf import HFBackend
        quantized = HFBackend({str(tiny_model_dir)!r}, load_in_4bit=True)
        print("4bit-ok", len(list(quantized.stream(Prompt(text="hi", max_new_tokens=3)))) > 0)
        for model, adapter in [("navtui-tests/absent-model", None),
                               ({str(tiny_model_dir)!r}, "navtui-tests/absent-adapter")]:
            try:
                HFBackend(model, adapter=adapter)
            except BackendError as exc:
                print("ERROR", exc)
    """
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home")}
    result = run_python(code, env=env)
    assert result.returncode == 0, result.stderr
    assert "4bit-ok True" in result.stdout
    errors = [line for line in result.stdout.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2
    assert "`hf download navtui-tests/absent-model`" in errors[0]
    assert "huggingface-cli download navtui-tests/absent-model" in errors[0]
    assert "`hf download navtui-tests/absent-adapter`" in errors[1]
    assert "gemm_4bit_forward" not in result.stderr


def test_4bit_without_bitsandbytes_says_how_to_install(tmp_path, tiny_model_dir):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import sys

            class BlockBitsandbytes:
                def find_spec(self, name, path=None, target=None):
                    if name.split(".")[0] == "bitsandbytes":
                        raise ImportError("No module named 'bitsandbytes'")
                    return None

            sys.meta_path.insert(0, BlockBitsandbytes())
            """
        )
    )
    code = f"""
        from agent_core.backends.base import BackendError
        from agent_core.backends.hf import HFBackend
        try:
            HFBackend({str(tiny_model_dir)!r}, load_in_4bit=True)
        except BackendError as exc:
            print("ERROR", exc)
    """
    result = run_python(code, env={"PYTHONPATH": str(blocker)})
    assert result.returncode == 0, result.stderr
    assert "ERROR --load-in-4bit needs bitsandbytes" in result.stdout
    assert "pip install 'bitsandbytes>=0.46'" in result.stdout


def test_adapter_for_another_base_names_its_base(tmp_path, tiny_model_dir, tiny_adapter_dir):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from tests.tiny_model import TINY_CONFIG

    other = tmp_path / "narrow-base"
    config = Qwen3Config(**{**TINY_CONFIG, "hidden_size": 32, "head_dim": 8, "intermediate_size": 64})
    Qwen3ForCausalLM(config).save_pretrained(other)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(tiny_model_dir / name, other / name)
    trained_on = json.loads((tiny_adapter_dir / "adapter_config.json").read_text())["base_model_name_or_path"]
    with pytest.raises(BackendError) as caught:
        HFBackend(str(other), adapter=str(tiny_adapter_dir))
    message = str(caught.value)
    assert f"does not fit base {other}" in message
    assert f"pass --model {trained_on}" in message


def test_out_of_memory_while_loading_suggests_what_helps_on_this_device(tmp_path, tiny_model_dir):
    """A checkpoint whose embedding cannot be allocated: a real allocation failure, on any machine.
    On a GPU 4-bit weights help; on CPU they take more memory than bf16, so they are not advised."""
    from agent_core.backends.hf_load import on_gpu

    from safetensors.torch import load_file, save_file

    huge = tmp_path / "huge"
    huge.mkdir()
    weights = {k: v for k, v in load_file(tiny_model_dir / "model.safetensors").items() if "embed" not in k}
    save_file(weights, huge / "model.safetensors", metadata={"format": "pt"})
    config = json.loads((tiny_model_dir / "config.json").read_text())
    config["vocab_size"] = 2**40  # 2**40 x 64 fp32 = 256 TiB: more than any address space holds
    (huge / "config.json").write_text(json.dumps(config))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tiny_model_dir / name, huge / name)
    advice = r"retry with --load-in-4bit" if on_gpu() else r"on CPU, 4/8-bit weights do not help"
    with pytest.raises(BackendError, match=r"out of memory loading .*" + advice):
        HFBackend(str(huge))


def test_missing_local_directory_says_check_the_path(tmp_path):
    with pytest.raises(BackendError, match="check the path"):
        HFBackend(str(tmp_path / "no-such-model"))


def test_conflicting_flags(tiny_model_dir, tiny_adapter_dir):
    with pytest.raises(BackendError, match="not both"):
        HFBackend(str(tiny_model_dir), load_in_4bit=True, load_in_8bit=True)
    with pytest.raises(BackendError, match="keep the adapter unmerged"):
        HFBackend(str(tiny_model_dir), adapter=str(tiny_adapter_dir), load_in_4bit=True, merge_adapter=True)
