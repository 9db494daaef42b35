"""Every error a user can cause at the command line is one clear line: no traceback, exit 1, the
thing to do named, and nothing started (no model load, no session).

One table, each row a bad input at an entry point (flags, config file, files, model folders,
adapters, tokenizers, server URLs, session ids, the repository), run through `app.cli.main` as
the `navtui` command runs it; a few rows again as a real process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

LATIN1 = "Der Fehler: f\xfcr alle Eingaben falsch\n".encode("latin-1")


@pytest.fixture
def place(git_repo: Path, tmp_path: Path) -> dict[str, str]:
    """The files and folders the rows name, by placeholder."""
    files = tmp_path / "files"
    files.mkdir()
    (files / "latin1.md").write_bytes(LATIN1)
    (files / "empty.md").write_text("")
    (files / "script.jsonl").write_text('{"output": "Action: submit"}\n')
    (files / "latin1.jsonl").write_bytes(b'{"output": "' + LATIN1.strip() + b'"}\n')
    (files / "model.gguf").write_bytes(b"GGUF\x03\x00")
    (files / "empty").mkdir()
    no_type = files / "no-type"
    no_type.mkdir()
    (no_type / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}')
    (no_type / "model.safetensors").write_bytes(b"")
    no_weights = files / "no-weights"
    no_weights.mkdir()
    (no_weights / "config.json").write_text('{"model_type": "qwen2"}')
    looks_whole = files / "looks-whole"
    looks_whole.mkdir()
    (looks_whole / "config.json").write_text('{"model_type": "qwen2"}')
    (looks_whole / "model.safetensors").write_bytes(b"")
    plain_dir = tmp_path / "not-a-repo"
    plain_dir.mkdir()
    return {"repo": str(git_repo), "files": str(files), "plain": str(plain_dir)}


def run_navtui(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`navtui ARGV` in this process: its exit code and what it wrote to stderr."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    return code, capsys.readouterr().err


def the_error_line(stderr: str) -> str:
    """The one line of the error (argparse's usage lines before it left out)."""
    lines = [line for line in stderr.splitlines()
             if line.strip() and not line.startswith(("usage:", " "))]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith("navtui"), stderr
    return lines[0]


A = ["--auto", "--issue", "fix it"]
ROWS = [
    # flags
    ("flag typo", ["--issu", "x", "{repo}"], "did you mean --issue?"),
    ("no prefix taken for a flag", ["--mod", "plan", "{repo}"], "unrecognized arguments: --mod"),
    ("subcommand flag typo", ["export", "x", "--fromat", "replay"], "did you mean --format?"),
    ("choice typo", [*A, "--backend", "hff", "{repo}"], "did you mean 'hf'?"),
    ("not a number", [*A, "--max-time", "soon", "{repo}"], "--max-time: must be a number, got 'soon'"),
    ("empty number", [*A, "--max-new-tokens", "", "{repo}"], "must be a whole number, got ''"),
    ("zero steps", [*A, "--max-steps", "0", "{repo}"], "must be at least 1"),
    ("two modes", ["--auto", "--plain", "--issue", "x", "{repo}"], "choose one of --auto"),
    ("empty issue", ["--auto", "--issue", " ", "{repo}"], "--issue is empty"),
    # files
    ("issue file not UTF-8", ["--auto", "--issue-file", "{files}/latin1.md", "{repo}"],
     "not UTF-8 text (byte 0xfc at offset 13); save it as UTF-8"),
    ("issue file is a folder", ["--auto", "--issue-file", "{files}", "{repo}"],
     "it is a directory; give the path of a file"),
    ("issue file missing", ["--auto", "--issue-file", "{files}/nope.md", "{repo}"],
     "cannot read --issue-file {files}/nope.md: no such file; check the path"),
    ("issue file empty", ["--auto", "--issue-file", "{files}/empty.md", "{repo}"], "is empty"),
    ("script not UTF-8", [*A, "--script", "{files}/latin1.jsonl", "{repo}"], "not UTF-8 text"),
    ("script is a folder", [*A, "--script", "{files}", "{repo}"], "is a directory"),
    ("profile not UTF-8", [*A, "--script", "{files}/script.jsonl", "--prompt-profile",
                           "{files}/latin1.md", "{repo}"], "not UTF-8 text"),
    ("log where no folder can be", [*A, "--script", "{files}/script.jsonl", "--trajectory",
                                    "{files}/empty.md/log.jsonl", "{repo}"],
     "cannot make its folder {files}/empty.md (a file is in its way); choose another path"),
    ("patch into a folder", [*A, "--script", "{files}/script.jsonl", "--patch-out", "{files}",
                             "{repo}"], "--patch-out {files} is a directory"),
    ("instances not UTF-8", ["batch", "{files}/latin1.md"], "not UTF-8 text"),
    # model folders, adapters, tokenizers
    ("model folder holds nothing", [*A, "--model", "{files}/empty", "{repo}"],
     "holds no model (no config.json)"),
    ("model is a GGUF file", [*A, "--model", "{files}/model.gguf", "{repo}"],
     "is a file; give the folder that holds its config.json (a GGUF file runs in llama.cpp"),
    ("model config without a type", [*A, "--model", "{files}/no-type", "{repo}"],
     "config.json names no model_type"),
    ("model without weights", [*A, "--model", "{files}/no-weights", "{repo}"],
     "has config.json but no weights"),
    ("model path missing", [*A, "--model", "{files}/gone/model", "{repo}"],
     "no such file or directory; check the path"),
    ("adapter folder holds nothing", [*A, "--model", "{files}/looks-whole", "--adapter",
                                      "{files}/empty", "{repo}"], "holds no adapter"),
    ("tokenizer folder holds nothing", [*A, "--base-url", "http://localhost:8000/v1", "--model",
                                        "m", "--tokenizer", "{files}/empty", "{repo}"],
     "holds no tokenizer"),
    # server URLs
    ("URL without scheme", [*A, "--base-url", "localhost:8000/v1", "--model", "m", "{repo}"],
     "must start with http:// or https://"),
    ("URL that is none", [*A, "--base-url", "http://[::1/v1", "--model", "m", "{repo}"],
     "is not a URL"),
    ("URL with a space", [*A, "--base-url", "http://gpu host/v1", "--model", "m", "{repo}"],
     "names no host"),
    ("server without a model", [*A, "--base-url", "http://localhost:8000/v1", "{repo}"],
     "needs --model: the model name the server serves"),
    # session ids
    ("unknown session", ["--plain", "--resume", "nope", "{repo}"], "no session 'nope'"),
    ("no session to resume", ["--plain", "--resume", "last", "{repo}"],
     "no navtui session is logged"),
    ("unknown session to export", ["export", "nope", "--format", "replay", "{repo}"],
     "no session 'nope'"),
    ("no session to export", ["export", "last", "--format", "replay", "{repo}"],
     "there is none to export"),
    # the repository
    ("repository missing", [*A, "{files}/nowhere"], "does not exist"),
    ("not a repository", [*A, "{plain}"], "is not a git repository"),
    ("sessions of a missing folder", ["sessions", "{files}/nowhere"], "does not exist"),
    # no model at all
    ("no model", [*A, "{repo}"], "needs --model"),
]


@pytest.mark.parametrize(("argv", "said"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS])
def test_a_bad_input_is_one_line_with_the_fix(argv, said, place, capsys):
    code, stderr = run_navtui([arg.format(**place) for arg in argv], capsys)
    line = the_error_line(stderr)
    assert code == 1, stderr
    assert said.format(**place) in line
    assert "loading the model" not in stderr and "is saved; continue it" not in stderr


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('resume = "last"\n', 'resume: belongs to one run, not to the config file: give --resume'),
        ('issue_file = "ISSUE.md"\n', "issue_file: belongs to one run"),
        ("max_time = [1]\n", "max_time: must be a number, got [1]"),
        ('max_steps = "many"\n', "max_steps: must be a whole number, got 'many'"),
        ("model = \n", "not valid TOML"),
    ],
)
def test_a_bad_config_file_is_one_line_naming_the_key(setting, said, place, capsys, monkeypatch,
                                                      tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(setting)
    monkeypatch.setenv("NAVTUI_CONFIG", str(config))
    code, stderr = run_navtui([*A, place["repo"]], capsys)
    assert code == 1 and said in the_error_line(stderr)


def test_a_config_file_that_is_not_utf8_is_one_line(place, capsys, monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_bytes(b"# " + LATIN1)
    monkeypatch.setenv("NAVTUI_CONFIG", str(config))
    code, stderr = run_navtui([*A, place["repo"]], capsys)
    assert code == 1 and "is not UTF-8" not in stderr  # (the file is named, then why)
    assert f"cannot read the config file {config}: not UTF-8 text" in the_error_line(stderr)


def test_a_bad_threads_variable_is_refused_before_the_model_loads(place, capsys, monkeypatch):
    monkeypatch.setenv("NAVTUI_THREADS", "many")
    code, stderr = run_navtui([*A, "--model", f"{place['files']}/looks-whole", place["repo"]],
                              capsys)
    assert code == 1 and "$NAVTUI_THREADS='many' is not a whole number" in the_error_line(stderr)
    assert "loading the model" not in stderr


def test_without_the_local_extra_a_missing_model_is_said_before_torch(place, capsys, monkeypatch):
    """With only the core installed, `navtui` with no model first asks for a model (or a
    server, or the demo); torch comes up once a model that needs it is named."""
    import agent_core.backends.hf_spec as hf_spec

    monkeypatch.setattr(hf_spec, "missing_local_packages", lambda: ["torch", "transformers"])
    code, stderr = run_navtui([*A, place["repo"]], capsys)
    line = the_error_line(stderr)
    assert code == 1 and "needs --model" in line and "torch" not in line
    assert "--base-url" in line and "navtui demo" in line
    code, stderr = run_navtui([*A, "--model", "navigator-8b", place["repo"]], capsys)
    assert code == 1 and "needs torch, transformers" in the_error_line(stderr)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--auto", "--issue-file", "{files}/latin1.md", "{repo}"], "not UTF-8 text"),
        ([*A, "--model", "{files}/empty", "{repo}"], "holds no model"),
        (["--issu", "x"], "did you mean --issue?"),
    ],
    ids=["issue file not UTF-8", "model folder holds nothing", "flag typo"],
)
def test_as_a_real_process(argv, said, place):
    done = subprocess.run([sys.executable, "-m", "app.cli", *(a.format(**place) for a in argv)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 1 and said in the_error_line(done.stderr)


def test_every_setting_of_the_config_template_can_be_uncommented_as_it_is(tmp_path):
    """`navtui config edit`'s template: a line uncommented and left as it is reads back (its
    "" keeps the default), and nothing in it belongs to one run (`resume = "last"` made every
    later `--issue` fail)."""
    from app.args import batch_parser, build_parser
    from app.config import load_config, template

    text = template(build_parser())
    settings = text.split("\n# [")[0]
    uncommented = "\n".join(line[2:] if line.startswith("# ") and " = " in line else line
                            for line in settings.splitlines())
    path = tmp_path / "config.toml"
    path.write_text(uncommented)
    config = load_config(build_parser(), path, also=(batch_parser(),))
    for key in ("resume", "issue", "issue_file", "force", "patch_out", "trajectory"):
        assert f"# {key} =" not in text
    assert "max_time" not in config.options and config.options["max_steps"] == 50
