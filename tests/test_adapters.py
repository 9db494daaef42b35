"""`navtui adapters`: versions of a real repository's adapters, promote/rollback of `current`
(what `--adapter current` loads), and a merged export of the tiny real LoRA that computes what
the adapter on its base computes."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from agent_core.backends.base import BackendError
from agent_core.backends.identity import ADAPTER_MANIFEST
from app.compose import registered_adapter
from tests.fixtures.repos import BUGGY_PROJECT, make_repo
from tests.test_cli import navtui
from tests.tiny_model import ADAPTER_RANK


def versioned(tiny_adapter_dir: Path, tiny_model_dir: Path, folder: Path, version: int,
              **manifest) -> Path:
    shutil.copytree(tiny_adapter_dir, folder)
    (folder / ADAPTER_MANIFEST).write_text(json.dumps(
        {"version": version, "base": str(tiny_model_dir), "method": "sft", **manifest}))
    return folder


def test_versions_are_listed_promoted_rolled_back_and_current_is_what_loads(
    tmp_path: Path, tiny_adapter_dir: Path, tiny_model_dir: Path
):
    repo = make_repo(tmp_path / "repo", BUGGY_PROJECT)
    one = versioned(tiny_adapter_dir, tiny_model_dir, tmp_path / "a1", 1,
                    metrics={"before": -2.5, "after": -1.25})
    two = versioned(tiny_adapter_dir, tiny_model_dir, tmp_path / "a2", 2, parent=str(one),
                    eval={"resolved": 2, "tasks": 3, "rate": 0.6667})
    assert navtui("adapters", str(repo)).stdout.startswith("No adapters registered")
    for folder, name in ((one, "v1"), (two, "v2")):
        added = navtui("adapters", str(repo), "add", str(folder))
        assert added.returncode == 0 and added.stdout == f"{name}: {folder}\n", added.stderr
    flags = argparse.Namespace(adapter="current", repo=str(repo))
    with pytest.raises(BackendError, match="no adapter is current yet"):
        registered_adapter(flags)

    assert navtui("adapters", str(repo), "promote", "v1").stdout == f"current: v1 ({one})\n"
    assert navtui("adapters", str(repo), "promote", "2").stdout == f"current: v2 ({two})\n"
    assert registered_adapter(flags) == str(two)
    listed = navtui("adapters", str(repo)).stdout.splitlines()
    assert listed[0].startswith("  v1       sft      not evaluated    logp -2.500 -> -1.250")
    assert listed[1].startswith("* v2       sft      resolved 66.7%")
    rows = [json.loads(line) for line in navtui("adapters", str(repo), "--json").stdout.splitlines()]
    assert [(r["version"], r["current"], r["parent"]) for r in rows] == [
        ("v1", False, None), ("v2", True, str(one))]

    assert navtui("adapters", str(repo), "rollback").stdout == f"current: v1 ({one})\n"
    assert registered_adapter(flags) == str(one)
    refused = navtui("adapters", str(repo), "rollback")
    assert refused.returncode == 1 and "nothing to roll back to" in refused.stderr
    unknown = navtui("adapters", str(repo), "promote", "v9")
    assert unknown.returncode == 1 and "known: v1, v2" in unknown.stderr


def test_export_merges_into_the_base_and_prints_the_vllm_line(
    tmp_path: Path, tiny_adapter_dir: Path, tiny_model_dir: Path
):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    repo = make_repo(tmp_path / "repo", BUGGY_PROJECT)
    adapter = versioned(tiny_adapter_dir, tiny_model_dir, tmp_path / "a3", 3)
    assert navtui("adapters", str(repo), "add", str(adapter)).returncode == 0
    merged = tmp_path / "merged"
    run = navtui("adapters", str(repo), "export", "v3", "--merged", str(merged))
    assert run.returncode == 0, run.stderr
    assert (f"vllm serve {tiny_model_dir} --enable-lora --lora-modules v3={adapter} "
            f"--max-lora-rank {ADAPTER_RANK}\n") in run.stdout
    assert f"merged into {merged}" in run.stdout
    assert not (merged / "adapter_config.json").exists() and (merged / "config.json").is_file()

    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        unmerged = PeftModel.from_pretrained(
            AutoModelForCausalLM.from_pretrained(tiny_model_dir), str(adapter))(ids).logits
        plain = AutoModelForCausalLM.from_pretrained(merged)(ids).logits
        base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)(ids).logits
    assert torch.allclose(unmerged, plain, atol=1e-4) and not torch.allclose(base, plain, atol=1e-4)
    again = navtui("adapters", str(repo), "export", "v3", "--merged", str(merged))
    assert again.returncode == 1 and "is not empty" in again.stderr
