"""`navtui doctor` as a user runs it: real cache folders, a real server, a broken config."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.fixtures.servers import Reply, ScriptedHTTPServer
from tests.test_model_errors import closed_port_url, hf_env, put_in_hf_cache

NAVTUI = str(Path(sys.executable).parent / "navtui")


def doctor(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NAVTUI, "doctor"], capture_output=True, text=True, env=env, timeout=120)


def lines_after(output: str, name: str) -> list[str]:
    """The line of check `name` and its indented details."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line[2:].startswith(name + " "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def test_doctor_reports_cache_server_and_config(
    tmp_path: Path, scripted_http: ScriptedHTTPServer, tiny_model_dir: Path
):
    put_in_hf_cache(tmp_path / "hf-home", "Qwen/Qwen3-8B", tiny_model_dir)
    config = tmp_path / "config.toml"
    config.write_text(f"base_url = {json.dumps(scripted_http.base_url)}\nmodel = \"navigator-8b\"\n")
    scripted_http.models = Reply(headers={"Content-Type": "application/json"},
                                 body=['{"object": "list", "data": [{"id": "navigator-8b"}]}'])
    result = doctor(hf_env(tmp_path, NAVTUI_CONFIG=str(config)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines_after(result.stdout, "navigator-8b") == [
        "· navigator-8b  1 to download",
        "                  model Qwen/Qwen3-8B: cached",
        "                  hf download ShubhamRasal/qwen3-8b-code-navigator",
    ]
    assert "hf download Qwen/Qwen3-30B-A3B" in result.stdout
    assert "hf download k-l-lambda/qwen3-30b-a3b-r2e-gym-sft" in result.stdout
    server = lines_after(result.stdout, "server")
    assert server[0].startswith(f"✓ server") and scripted_http.base_url in server[0]
    assert "serves: navigator-8b" in server[1]
    assert [r.path for r in scripted_http.gets] == ["/v1/models"]
    assert f"✓ config        {config} is valid" in result.stdout
    assert lines_after(result.stdout, "python")[0].startswith("✓ python")
    assert lines_after(result.stdout, "sandbox")[0].startswith("✓ sandbox       bubblewrap works")


def test_doctor_fails_on_an_unreachable_server_and_a_broken_config(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text(f"base_url = {json.dumps(closed_port_url() + '/v1')}\n")
    unreachable = doctor(hf_env(tmp_path, NAVTUI_CONFIG=str(config)))
    assert unreachable.returncode == 1
    assert "✗ server" in unreachable.stdout and "unreachable: ConnectError" in unreachable.stdout

    config.write_text("base_url = \"x\"\nmax_steps = \"lots\"\n")
    broken = doctor(hf_env(tmp_path, NAVTUI_CONFIG=str(config)))
    assert broken.returncode == 1
    assert f"{config}:2: max_steps: must be a whole number" in broken.stdout


def test_doctor_without_the_local_extra_says_what_is_missing(tmp_path: Path):
    code = textwrap.dedent("""
        import sys
        for name in ("torch", "transformers", "peft", "accelerate", "bitsandbytes", "huggingface_hub"):
            sys.modules[name] = None
        from app.cli import main
        code = main(["doctor"])
        print("EXIT", code, "torch" in sys.modules and sys.modules["torch"] is not None)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=hf_env(tmp_path), timeout=120, cwd=Path(__file__).parent.parent)
    assert result.returncode == 0, result.stderr
    assert "EXIT 0 False" in result.stdout
    assert "! torch" in result.stdout and "pip install 'navtui[local]'" in result.stdout
    # Torch's build first, as the README says, never the extra alone (it would pull CUDA torch).
    for line in result.stdout.splitlines():
        if "navtui[local]" in line and "comes with" not in line:
            assert line.index("download.pytorch.org/whl/cpu") < line.index("navtui[local]"), line
    assert "hf download Qwen/Qwen3-8B" in result.stdout


def test_doctor_says_why_the_sandbox_cannot_run(tmp_path: Path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    config = tmp_path / "config.toml"
    config.write_text('sandbox = "on"\n')
    result = doctor(hf_env(tmp_path, NAVTUI_BWRAP=str(fake), NAVTUI_CONFIG=str(config)))
    assert result.returncode == 1
    sandbox = lines_after(result.stdout, "sandbox")
    assert sandbox[0].startswith("✗ sandbox") and "not available" in sandbox[0]
    assert "No permissions to create new namespace" in sandbox[1]
    assert "sessions will refuse to start" in sandbox[2]
