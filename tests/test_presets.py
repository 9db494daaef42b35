"""Presets for the two seed models, and how explicit flags override them."""

from __future__ import annotations

import pytest

from agent_core.backends.factory import BackendConfig, resolve
from agent_core.backends.presets import PRESETS, Preset, resolve_preset


def test_presets_are_exactly_the_two_seed_models():
    assert PRESETS == {
        "navigator-8b": Preset(
            "navigator-8b", "Qwen/Qwen3-8B", "ShubhamRasal/qwen3-8b-code-navigator", "toolcall", 16384,
            max_new_tokens=1024, prompt_profile="swesmith",
        ),
        "r2e-30b": Preset(
            "r2e-30b", "Qwen/Qwen3-30B-A3B", "k-l-lambda/qwen3-30b-a3b-r2e-gym-sft", "text", 4096,
            max_new_tokens=512, prompt_profile="r2e-card",
        ),
    }


@pytest.mark.parametrize("name", ["navigator-8b", "Navigator-8B", " r2e-30b "])
def test_resolve_preset_by_name(name):
    preset = resolve_preset(name)
    assert preset is not None and preset.name == name.strip().lower()
    assert preset.model == preset.base


@pytest.mark.parametrize("name", ["Qwen/Qwen3-8B", "./models/navigator-8b", "navigator"])
def test_model_ids_and_paths_are_not_presets(name):
    assert resolve_preset(name) is None


def test_preset_fills_the_hf_backend_config():
    config = resolve(BackendConfig(backend="hf", model="navigator-8b"))
    assert (config.model, config.adapter, config.dialect, config.context_window, config.preset) == (
        "Qwen/Qwen3-8B",
        "ShubhamRasal/qwen3-8b-code-navigator",
        "toolcall",
        16384,
        "navigator-8b",
    )


def test_explicit_flags_override_the_preset(tmp_path):
    adapter = tmp_path / "my-adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")  # a folder that holds an adapter
    (adapter / "adapter_model.safetensors").write_bytes(b"")
    config = resolve(
        BackendConfig(backend="hf", model="r2e-30b", adapter=str(adapter), dialect="xml", context_window=8192)
    )
    assert config.model == "Qwen/Qwen3-30B-A3B"
    assert (config.adapter, config.dialect, config.context_window) == (str(adapter), "xml", 8192)


def test_served_preset_keeps_its_name_for_the_openai_backend():
    config = resolve(BackendConfig(backend="openai", base_url="http://127.0.0.1:8000/v1", model="r2e-30b"))
    assert (config.model, config.dialect, config.context_window) == ("r2e-30b", "text", 4096)
