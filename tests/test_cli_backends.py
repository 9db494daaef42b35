"""Choosing and building the backend from command-line flags (`agent_core.backends.factory`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.backends.base import BackendError
from agent_core.backends.factory import BackendConfig, create_backend, describe, resolve
from agent_core.backends.replay import ReplayBackend
from tests.test_session import FIX_SCRIPTS, write_script


def test_presets_fill_model_adapter_dialect_and_window():
    navigator = resolve(BackendConfig(model="navigator-8b"))
    assert (navigator.backend, navigator.model, navigator.adapter) == (
        "hf", "Qwen/Qwen3-8B", "ShubhamRasal/qwen3-8b-code-navigator",
    )
    assert (navigator.dialect, navigator.context_window, navigator.preset) == ("toolcall", 16_384, "navigator-8b")
    r2e = resolve(BackendConfig(model="r2e-30b", load_in_4bit=True))
    assert (r2e.model, r2e.adapter) == ("Qwen/Qwen3-30B-A3B", "k-l-lambda/qwen3-30b-a3b-r2e-gym-sft")
    assert (r2e.dialect, r2e.context_window) == ("text", 4096)


def test_explicit_flags_override_a_preset(tmp_path):
    adapter = tmp_path / "my-adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"")
    config = resolve(BackendConfig(model="navigator-8b", adapter=str(adapter), dialect="xml"))
    assert config.model == "Qwen/Qwen3-8B" and config.adapter == str(adapter) and config.dialect == "xml"


def test_a_preset_name_against_a_server_keeps_the_served_name():
    config = resolve(BackendConfig(model="r2e-30b", base_url="http://localhost:8000/v1"))
    assert config.backend == "openai" and config.model == "r2e-30b"
    assert config.dialect == "text" and config.context_window == 4096


@pytest.mark.parametrize(
    ("model", "dialect"),
    [("someone/qwen3-code-navigator-v2", "toolcall"), ("org/R2E-Gym-32B", "text"),
     ("SWE-bench/SWE-agent-LM-32B", "xml"), ("Qwen/Qwen3-8B", "auto")],
)
def test_dialect_from_the_model_name(model, dialect):
    assert resolve(BackendConfig(backend="openai", base_url="http://h:1", model=model)).dialect == dialect


@pytest.mark.parametrize("dialect", ["text", "toolcall", "xml"])
def test_dialect_from_the_replay_scripts_first_turn(dialect, tmp_path):
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS[dialect])
    config = resolve(BackendConfig(script=str(script)))
    assert config.backend == "replay" and config.dialect == dialect and config.context_window == 16_384
    assert isinstance(create_backend(config), ReplayBackend)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (BackendConfig(model="./models/missing"), "no such file or directory"),
        (BackendConfig(model="Qwen/Qwen3-8B", adapter="/nowhere/adapter"), "--adapter /nowhere/adapter"),
        (BackendConfig(), "needs --model"),
        (BackendConfig(backend="openai", model="m"), "needs --base-url"),
        (BackendConfig(base_url="http://h:1"), "needs --model"),
        (BackendConfig(script="/nowhere/s.jsonl"), "replay script not found"),
        (BackendConfig(model="m", load_in_4bit=True, load_in_8bit=True), "not both"),
    ],
)
def test_bad_flags_are_refused_before_loading(config, message):
    with pytest.raises(BackendError, match=message.replace("(", r"\(")):
        create_backend(config)


def test_replay_without_a_script_is_refused():
    with pytest.raises(BackendError, match="needs --script"):
        create_backend(resolve(BackendConfig(backend="replay")))


def test_describe_never_shows_the_api_key():
    config = resolve(BackendConfig(base_url="http://h:1/v1", model="navigator-8b", api_key="sk-secret"))
    info = describe(config)
    assert "sk-secret" not in str(info)
    assert info["backend"] == "openai" and info["preset"] == "navigator-8b"


def test_hf_backend_is_built_from_a_local_model_and_adapter(tiny_model_dir: Path, tiny_adapter_dir: Path):
    backend = create_backend(resolve(BackendConfig(model=str(tiny_model_dir), adapter=str(tiny_adapter_dir))))
    try:
        assert backend.name == "hf"
        from agent_core.prompts import build_prompt

        prompt = build_prompt("toolcall", "fix it", [])
        assert 0 < backend.count_tokens(prompt) < 2000
    finally:
        backend.close()


def test_backends_are_one_registry_of_specs():
    from agent_core.backends.factory import BACKENDS, SPECS, spec_for

    assert set(BACKENDS) == set(SPECS) == {"hf", "openai", "replay"}
    assert [name for name, spec in SPECS.items() if spec.scripted] == ["replay"]
    assert [name for name, spec in SPECS.items() if spec.loads_weights] == ["hf"]
    with pytest.raises(BackendError, match="unknown backend 'nope'; choose one of hf, openai, replay"):
        spec_for("nope")
