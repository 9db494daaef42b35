"""The core install (no `navtui[local]`) runs the demo, replay and the openai backend.

Each check runs in a fresh interpreter, so what the product imports is all that is in
`sys.modules`; "without the extra" is made real by blocking the imports there
(`sys.modules[name] = None` makes `import name` fail as if it were not installed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_core.backends.base import Prompt
from agent_core.backends.openai_compat import OpenAIBackend
from agent_core.backends.token_estimate import estimate_prompt_tokens
from tests.fixtures.repos import BUGGY_PROJECT, make_repo
from tests.fixtures.servers import Reply, ScriptedHTTPServer, content_chunk, sse
from tests.test_session import FIX_SCRIPTS, write_script

HEAVY = ("torch", "transformers", "peft", "accelerate", "bitsandbytes")
LIGHT_PACKAGES = ("app", "agent_core", "widgets")


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=180, cwd=Path(__file__).parent.parent)


def test_replay_openai_and_every_module_run_without_importing_the_local_extra(
    tmp_path: Path, scripted_http: ScriptedHTTPServer
):
    for output in FIX_SCRIPTS["toolcall"]:
        scripted_http.queue(Reply(body=sse(content_chunk(output, finish="stop"), "[DONE]")))
    script = write_script(tmp_path / "s.jsonl", FIX_SCRIPTS["text"])
    replay_repo = make_repo(tmp_path / "replay", BUGGY_PROJECT)
    openai_repo = make_repo(tmp_path / "openai", BUGGY_PROJECT)
    result = run_python(f"""
        import importlib, json, pkgutil, sys
        from app.cli import main
        codes = [
            main(["--auto", "--script", {str(script)!r}, "--issue", "fix it", {str(replay_repo)!r}]),
            main(["--auto", "--base-url", {scripted_http.base_url!r}, "--model", "navigator-8b",
                  "--issue", "fix it", {str(openai_repo)!r}]),
        ]
        for package in {LIGHT_PACKAGES!r}:
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(root.__path__, package + "."):
                importlib.import_module(info.name)
        print(json.dumps({{"codes": codes, "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
    """)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome == {"codes": [0, 0], "heavy": []}, result.stderr


@pytest.mark.parametrize("flags", [["--model", "navigator-8b"], ["--backend", "hf", "--model", "x"]])
def test_the_hf_backend_without_the_local_extra_says_what_to_install(git_repo: Path, flags):
    result = run_python(f"""
        import sys
        for name in {HEAVY!r}:
            sys.modules[name] = None
        from app.cli import main
        sys.exit(main(["--auto", *{flags!r}, "--issue", "fix it", {str(git_repo)!r}]))
    """)
    assert result.returncode == 1
    assert "pip install 'navtui[local]'" in result.stderr
    cpu, cuda = "download.pytorch.org/whl/cpu", "download.pytorch.org/whl/cu128"
    assert result.stderr.index(cpu) < result.stderr.index(cuda) < result.stderr.index("navtui[local]")
    assert "torch, transformers, peft, accelerate" in result.stderr
    assert "Traceback" not in result.stderr


def test_openai_token_counts_fall_back_to_the_estimate_without_transformers(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setitem(sys.modules, "transformers", None)
    backend = OpenAIBackend("http://127.0.0.1:9/v1", "navigator-8b", tokenizer="Qwen/Qwen3-8B")
    prompt = Prompt(messages=[{"role": "user", "content": "average is off by one " * 20}])
    assert backend.count_tokens(prompt) == estimate_prompt_tokens(prompt)
