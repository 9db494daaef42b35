"""What `find_exposure` shows for the common ways developers install tools under HOME (real
directory trees in a tmp HOME; tests/test_sandbox_toolchain.py runs them in real bwrap)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agent_core.executor.exposure import ExposureError, find_exposure

SYSTEM = ("/usr", "/bin", "/etc")


def tree(home: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("->"):
            path.symlink_to(home / text[2:].strip())
        else:
            path.write_text(text)
            path.chmod(0o755)


def shown(home: Path, path: str, **environ: str) -> tuple[str, ...]:
    env = {"HOME": str(home), "PATH": path.replace("~", str(home)), **environ}
    found = find_exposure(env, homes=(str(home),), visible=SYSTEM)
    return tuple(p.replace(str(home), "~") for p in found.paths)


PYTHON_INSTALL = {"lib/python3.12/os.py": "", "bin/python3.12": "#!/bin/sh\n"}


def python_at(prefix: str) -> dict[str, str]:
    return {f"{prefix}/{name}": text for name, text in PYTHON_INSTALL.items()}


def test_conda_shows_its_whole_installation(tmp_path: Path):
    tree(tmp_path, {"miniconda3/conda-meta/history": "", "miniconda3/bin/conda": "#!/bin/sh\n",
                    "miniconda3/condabin/conda": "#!/bin/sh\n"})
    assert shown(tmp_path, "~/miniconda3/condabin:~/miniconda3/bin:/usr/bin") == ("~/miniconda3",)


def test_nvm_shows_the_node_version_with_its_modules(tmp_path: Path):
    node = ".nvm/versions/node/v20.1.0"
    npm = f"{node}/lib/node_modules/npm/bin/npm-cli.js"
    tree(tmp_path, {f"{node}/bin/node": "\x7fELF", npm: "#!/usr/bin/env node\n",
                    f"{node}/bin/npm": f"->{npm}"})
    assert shown(tmp_path, f"~/{node}/bin:/usr/bin") == (f"~/{node}/bin", f"~/{node}/lib")


def test_uv_and_pipx_tools_show_their_venv_and_its_base_python(tmp_path: Path):
    base = ".local/share/uv/python/cpython-3.12"
    tool = ".local/share/uv/tools/ruff"
    tree(tmp_path, {**python_at(base), f"{tool}/pyvenv.cfg": f"home = {tmp_path}/{base}/bin\n",
                    f"{tool}/bin/ruff": f"#!{tmp_path}/{tool}/bin/python\n",
                    f"{tool}/bin/python": "->" + f"{base}/bin/python3.12",
                    ".local/bin/ruff": "->" + f"{tool}/bin/ruff",
                    ".local/bin/python3.12": "->" + f"{base}/bin/python3.12",
                    ".local/share/fish/fish_history": "- cmd: export TOKEN=x\n"})
    assert shown(tmp_path, "~/.local/bin:/usr/bin") == ("~/.local/bin", f"~/{base}", f"~/{tool}")


def test_cargo_with_rustup_shows_the_toolchains(tmp_path: Path):
    tree(tmp_path, {".cargo/bin/rustup": "\x7fELF", ".cargo/bin/cargo": "\x7fELF",
                    ".cargo/credentials.toml": "token = 'x'\n",
                    ".rustup/toolchains/stable/bin/cargo": "\x7fELF"})
    assert shown(tmp_path, "~/.cargo/bin:/usr/bin") == ("~/.cargo/bin", "~/.rustup")


def test_a_venv_on_path_shows_itself_and_its_base(tmp_path: Path):
    base = ".pyenv/versions/3.12.1"
    tree(tmp_path, {**python_at(base), "project/.venv/pyvenv.cfg":
                    f"home = {tmp_path}/{base}/bin\n", "project/.venv/bin/python":
                    "->" + f"{base}/bin/python3.12"})
    assert shown(tmp_path, "~/project/.venv/bin:/usr/bin") == (f"~/{base}", "~/project/.venv")
    # Named by VIRTUAL_ENV instead: the same.
    assert shown(tmp_path, "/usr/bin", VIRTUAL_ENV=f"{tmp_path}/project/.venv") == (
        f"~/{base}", "~/project/.venv")


def test_the_home_itself_and_system_directories_are_never_listed(tmp_path: Path):
    tree(tmp_path, {"tool": "#!/bin/sh\n", "bin/x": "->tool"})
    assert shown(tmp_path, "~:/usr/bin:/bin") == ()  # `~` on PATH: refused, `~/tool` not shown
    found = find_exposure({"HOME": str(tmp_path), "PATH": f"{tmp_path}:/usr/bin"},
                          homes=(str(tmp_path),), visible=SYSTEM)
    assert found.refused == (str(tmp_path),)


@pytest.mark.parametrize("asked", ["~", "/", "~/.ssh", "~/.netrc", "~/.config/navtui/x.toml"])
def test_asking_for_a_denied_path_or_the_whole_home_is_an_error(tmp_path: Path, asked: str,
                                                                monkeypatch: pytest.MonkeyPatch):
    tree(tmp_path, {".ssh/id_rsa": "key", ".netrc": "machine x", ".config/navtui/x.toml": ""})
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ExposureError, match="--expose"):
        find_exposure({"HOME": str(tmp_path)}, homes=(str(tmp_path),), visible=SYSTEM,
                      asked=(Path(asked),))


def test_a_denied_path_reached_through_a_link_is_denied_too(tmp_path: Path):
    tree(tmp_path, {"keys/id_rsa": "key", "tools/bin/t": "#!/bin/sh\n"})
    os.symlink(tmp_path / "keys", tmp_path / ".ssh")
    with pytest.raises(ExposureError, match="never shows credentials"):
        find_exposure({"HOME": str(tmp_path)}, homes=(str(tmp_path),), visible=SYSTEM,
                      asked=(tmp_path / "keys",))
    env = {"HOME": str(tmp_path), "PATH": f"{tmp_path}/keys:{tmp_path}/tools/bin"}
    found = find_exposure(env, homes=(str(tmp_path),), visible=SYSTEM)
    assert found.paths == (f"{tmp_path}/tools/bin",) and found.refused == (f"{tmp_path}/keys",)


def test_navtuis_own_python_is_shown_when_asked_as_readable(tmp_path: Path):
    found = find_exposure({"HOME": str(tmp_path)}, homes=(str(tmp_path),), visible=(),
                          readable=(sys.prefix,))
    assert os.path.realpath(sys.prefix) in found.paths
