"""An adapter made by `navtui finetune` is named with its version where the backend is shown
(status bar label, the log's backend_info and identity)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from agent_core.backends.factory import BackendConfig, describe
from agent_core.backends.hf_load import describe as label
from agent_core.backends.identity import adapter_identity, revision_of


def made_adapter(folder: Path, version: int) -> Path:
    folder.mkdir()
    (folder / "adapter_model.safetensors").write_bytes(b"weights")
    (folder / "navtui-adapter.json").write_text(json.dumps(
        {"version": version, "base": "Qwen/Qwen3-8B", "method": "sft+dpo"}))
    return folder


def test_a_navtui_adapter_is_named_with_its_version(tmp_path):
    adapter = made_adapter(tmp_path / "my-repo-adapter", 3)
    info = describe(BackendConfig(backend="hf", model="Qwen/Qwen3-8B", adapter=str(adapter)))
    assert info["adapter"] == str(adapter) and info["adapter_version"] == "v3"
    assert label("Qwen/Qwen3-8B", str(adapter)) == "Qwen/Qwen3-8B + my-repo-adapter v3"
    found = adapter_identity(str(adapter), str(adapter))
    assert found["version"] == 3 and found["method"] == "sft+dpo"
    assert found["weights_sha256"] == hashlib.sha256(b"weights").hexdigest()


def test_other_adapters_keep_their_plain_name(tmp_path):
    plain = tmp_path / "lora"
    plain.mkdir()
    assert "adapter_version" not in describe(BackendConfig(backend="hf", model="m",
                                                           adapter=str(plain)))
    assert label("m", str(plain)) == "m + lora"
    assert revision_of("/c/models--Qwen--Qwen3-8B/snapshots/" + "a" * 40) == "a" * 40
    assert revision_of(str(plain)) is None
