"""Missing weights fail in seconds, naming base and adapter; cached ones load with no network.

Each case runs navtui (or the backend) in a fresh process, with its own Hugging Face cache
(`HF_HOME`), so what huggingface_hub reads at import is what the test set.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

NAVTUI = str(Path(sys.executable).parent / "navtui")
ROOT = Path(__file__).resolve().parent.parent
HANG_GUARD = 60  # seconds; the failure itself takes a few (measured in the report, not here)


def put_in_hf_cache(hf_home: Path, repo_id: str, source: Path) -> Path:
    """`source` laid out as the Hugging Face cache holds a downloaded `repo_id` (main revision)."""
    repo = hf_home / "hub" / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(source, repo / "snapshots" / commit)
    return repo


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connections are refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def hf_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return {**env, "HF_HOME": str(tmp_path / "hf-home"), **extra}


@pytest.mark.parametrize("offline", ["variable", "no network"])
def test_missing_base_and_adapter_fail_at_once_with_both_commands(git_repo: Path, tmp_path: Path, offline):
    extra = {"HF_HUB_OFFLINE": "1"} if offline == "variable" else {"HF_ENDPOINT": closed_port_url()}
    result = subprocess.run(
        [NAVTUI, "--auto", "--model", "navigator-8b", "--load-in-4bit", "--issue", "fix it",
         str(git_repo)],
        capture_output=True, text=True, env=hf_env(tmp_path, **extra), timeout=HANG_GUARD,
    )
    assert result.returncode == 1
    [line] = [line for line in result.stderr.splitlines() if line.startswith("navtui:")]
    assert "model Qwen/Qwen3-8B and adapter ShubhamRasal/qwen3-8b-code-navigator are not on this" in line
    assert "`hf download Qwen/Qwen3-8B` and `hf download ShubhamRasal/qwen3-8b-code-navigator`" in line
    assert ("HF_HUB_OFFLINE is set" if offline == "variable" else "did not answer within 2 s") in line
    assert "Retrying" not in result.stderr and "Traceback" not in result.stderr


def run_backend(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=HANG_GUARD * 3)


def test_cached_weights_load_offline_and_a_missing_adapter_is_named_alone(
    tmp_path: Path, tiny_model_dir: Path, tiny_adapter_dir: Path
):
    env = hf_env(tmp_path, HF_ENDPOINT=closed_port_url())
    put_in_hf_cache(tmp_path / "hf-home", "navtui-tests/tiny", tiny_model_dir)
    put_in_hf_cache(tmp_path / "hf-home", "navtui-tests/tiny-lora", tiny_adapter_dir)
    result = run_backend("""
        from agent_core.backends.base import BackendError
        from agent_core.backends.hf import HFBackend
        backend = HFBackend("navtui-tests/tiny", adapter="navtui-tests/tiny-lora")
        print("LOADED", backend.label, type(backend.model).__name__)
        try:
            HFBackend("navtui-tests/tiny", adapter="navtui-tests/absent-lora")
        except BackendError as error:
            print("ERROR", error)
    """, env)
    assert result.returncode == 0, result.stderr
    assert "LOADED navtui-tests/tiny + navtui-tests/tiny-lora PeftModelForCausalLM" in result.stdout
    [error] = [line for line in result.stdout.splitlines() if line.startswith("ERROR")]
    assert "adapter navtui-tests/absent-lora is not on this machine" in error
    assert "`hf download navtui-tests/absent-lora`" in error and "Qwen" not in error
    assert "hf download navtui-tests/tiny`" not in error
