"""Backends are found by scanning `agent_core.backends` for `*_spec` modules, as dialects are
found in `agent_core.formats`: a new backend is one module, and the three built-in ones are
chosen and refused exactly as before."""

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
from agent_core.backends.factory import BACKENDS, SPECS, BackendConfig, create_backend, resolve
from agent_core.backends.presets import PRESETS
from tests.fixtures.repos import BUGGY_PROJECT, make_repo
from tests.test_cli import navtui
from tests.test_session import FIX_SCRIPTS, FIXED_LINE, write_script

ROOT = Path(__file__).resolve().parent.parent

# The whole of a new backend: it proposes the fix of BUGGY_PROJECT one turn at a time, and is
# the default for `--model echo-default` (asked before replay, openai and hf).
ECHO_SPEC = '''
"""`--backend echo`: the fix of the tests' buggy project, turn by turn."""

from agent_core.backends.base import Backend, BackendError
from agent_core.backends.spec import BackendSpec
from agent_core.backends.token_estimate import estimate_prompt_tokens

OUTPUTS = {outputs!r}


class EchoBackend(Backend):
    name = "echo"

    def __init__(self, model):
        self.model = model
        self.last_usage = None
        self._turn = 0

    def stream(self, prompt):  # after the last turn (submit), submits again when asked to review
        self._turn += 1
        yield OUTPUTS[min(self._turn, len(OUTPUTS)) - 1]

    def cancel(self):
        pass

    def count_tokens(self, prompt):
        return estimate_prompt_tokens(prompt)

    def close(self):
        pass


def check(config):
    if not config.model:
        raise BackendError("--backend echo needs --model: any name")


BACKEND = BackendSpec(
    "echo", check, lambda config, progress, backoff: EchoBackend(config.model),
    summary="the fix, turn by turn",
    chosen_by_default=lambda config: config.model == "echo-default", default_order=5,
    default_note="echo with --model echo-default", dialect_hint=lambda config: "toolcall",
)
'''


@pytest.fixture
def tree_with_echo(tmp_path: Path) -> Path:
    """A copy of navtui's packages with one file added: agent_core/backends/echo_spec.py."""
    src = tmp_path / "src"
    for package in ("agent_core", "app", "widgets"):
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (src / "agent_core/backends/echo_spec.py").write_text(
        ECHO_SPEC.format(outputs=FIX_SCRIPTS["toolcall"]), encoding="utf-8")
    return src


def test_a_new_backend_is_one_module(tree_with_echo: Path, tmp_path: Path):
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return navtui(*args, env={"PYTHONPATH": str(tree_with_echo)}, cwd=tree_with_echo)

    help_text = " ".join(run("--help").stdout.split())
    assert "{echo,hf,openai,replay}" in help_text
    assert "echo: the fix, turn by turn;" in help_text
    assert "(default: echo with --model echo-default, replay with --script" in help_text

    unused = make_repo(tmp_path / "unused", BUGGY_PROJECT)
    refused = run("--auto", "--backend", "echo", "--issue", "fix it", str(unused))
    assert refused.returncode == 1 and "--backend echo needs --model: any name" in refused.stderr

    for flags in (["--backend", "echo", "--model", "mine"], ["--model", "echo-default"]):
        repo = make_repo(tmp_path / flags[-1], BUGGY_PROJECT)
        done = run("--auto", "--json", *flags, "--issue", "average is off by one", str(repo))
        assert done.returncode == 0, done.stderr
        started = json.loads(done.stdout.splitlines()[0])
        assert started["config"]["backend_info"] == {
            "backend": "echo", "model": flags[-1], "dialect": "toolcall"}
        assert FIXED_LINE in (repo / "calc/ops.py").read_text()

    resolved = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            from agent_core.backends.factory import BackendConfig, create_backend, resolve
            config = resolve(BackendConfig(model="echo-default"))
            print(config.backend, type(create_backend(config)).__name__)
        """)], capture_output=True, text=True, timeout=60, cwd=tree_with_echo,
        env={**os.environ, "PYTHONPATH": str(tree_with_echo)},
    )
    assert resolved.stdout.split() == ["echo", "EchoBackend"], resolved.stderr


def test_two_backends_of_one_name_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import agent_core.backends
    from agent_core.backends import factory

    (tmp_path / "again_spec.py").write_text("from agent_core.backends.replay_spec import BACKEND\n")
    monkeypatch.setattr(agent_core.backends, "__path__", [*agent_core.backends.__path__, str(tmp_path)])
    try:
        with pytest.raises(ValueError, match="two backends are called 'replay' \\(again_spec"):
            factory._discover()
    finally:
        sys.modules.pop("agent_core.backends.again_spec", None)


def test_the_builtins_are_registered_in_todays_order():
    assert BACKENDS == ("hf", "openai", "replay")
    assert list(SPECS) == ["replay", "openai", "hf"]  # the order the default is looked for
    help_text = " ".join(navtui("--help").stdout.split())
    assert ("--backend {hf,openai,replay} hf: local transformers; openai: an OpenAI-compatible "
            "server; replay: a script (default: replay with --script, openai with --base-url, "
            "else hf)") in help_text


def test_the_default_is_replay_with_a_script_then_openai_with_a_url_else_hf(tmp_path: Path):
    script = str(write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["xml"]))
    model = "Qwen/Qwen3-8B"
    chosen = {
        (script, "http://h:1/v1", model): "replay",
        (script, None, None): "replay",
        (None, "http://h:1/v1", model): "openai",
        (None, None, model): "hf",
    }
    for (script_flag, base_url, model_flag), backend in chosen.items():
        config = resolve(BackendConfig(script=script_flag, base_url=base_url, model=model_flag))
        assert config.backend == backend, (script_flag, base_url, model_flag)
    assert resolve(BackendConfig(script=script)).dialect == "xml"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (BackendConfig(backend="nope"), "unknown backend 'nope'; choose one of hf, openai, replay"),
        (BackendConfig(backend="openai", model="m"),
         "--backend openai needs --base-url, e.g. --base-url http://localhost:8000/v1"),
        (BackendConfig(base_url="http://h:1"),
         "--backend openai needs --model: the model name the server serves"),
        (BackendConfig(script="/nowhere/s.jsonl"),
         "replay script not found: /nowhere/s.jsonl; check the --script path"),
        (BackendConfig(backend="replay"),
         '--backend replay needs --script FILE (JSON Lines of {"output": ...})'),
        (BackendConfig(),
         f"--backend hf needs --model: a preset ({', '.join(PRESETS)}), a Hugging Face id or "
         "a local directory; or a server's model with --base-url URL; `navtui demo` tries the "
         "app without a model"),
        (BackendConfig(model="./models/missing"),
         "--model ./models/missing: no such file or directory; check the path"),
        (BackendConfig(model="m", load_in_4bit=True, load_in_8bit=True),
         "choose one of --load-in-4bit and --load-in-8bit, not both"),
    ],
)
def test_the_builtins_refuse_bad_flags_with_todays_words(config: BackendConfig, message: str):
    with pytest.raises(BackendError) as refused:
        create_backend(config)
    assert str(refused.value) == message


def test_registering_the_backends_imports_none_of_them():
    """Reading the specs costs nothing: the backends' modules (httpx, the local extra) are
    imported by `create` only."""
    code = textwrap.dedent("""
        import sys
        from agent_core.backends.factory import SPECS
        print(sorted(m for m in sys.modules if m in (
            "torch", "transformers", "httpx", "agent_core.backends.hf",
            "agent_core.backends.openai_compat", "agent_core.backends.replay")))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=ROOT, check=True)
    assert result.stdout.strip() == "[]"


def test_batch_with_a_script_dir_picks_the_scripted_backend_and_refuses_one_without(
    tmp_path: Path,
):
    instances = tmp_path / "instances.jsonl"
    instances.write_text("")
    refused = navtui("batch", str(instances), "--backend", "replay", "--output", str(tmp_path / "o"))
    assert refused.returncode == 1
    assert "--backend replay needs --script-dir DIR (one <instance_id>.jsonl each)" in refused.stderr
