"""Shared fixtures live in tests/fixtures/; each area owns its own module there.

Every test runs as on a fresh CI machine: an empty `HOME` and XDG folders, no global or system
git config, a fixed git identity, and no navtui config file. The tiny-model cache is the one
exception: its location is settled from the real home before it is swapped, so models built once
are reused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.fixtures.repos", "tests.fixtures.models", "tests.fixtures.servers",
                  "tests.fixtures.tmux"]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "navtui tests",
    "GIT_AUTHOR_EMAIL": "tests@navtui.invalid",
    "GIT_COMMITTER_NAME": "navtui tests",
    "GIT_COMMITTER_EMAIL": "tests@navtui.invalid",
}
GLOBAL_GIT_CONFIG = "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"


def isolated_environment(root: Path) -> dict[str, str]:
    """Variables that cut the tests off from this machine's home, git config and navtui config."""
    from tests.fixtures.models import CACHE_ENV, default_cache_base

    home = root / "home"
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "GIT_CONFIG_GLOBAL": str(root / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "NAVTUI_CONFIG": str(root / "navtui-config.toml"),  # absent: built-in defaults
        CACHE_ENV: os.environ.get(CACHE_ENV) or str(default_cache_base()),
        **GIT_IDENTITY,
    }
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    (root / "gitconfig").write_text(GLOBAL_GIT_CONFIG)
    return env


@pytest.fixture(scope="session", autouse=True)
def machine_independent_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Applied for the whole session, subprocesses included (see the module docstring)."""
    env = isolated_environment(tmp_path_factory.mktemp("machine"))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("GIT_CONFIG", raising=False)
        patch.delenv("GIT_DIR", raising=False)
        yield


# Fixtures that load, build or serve a tiny real model: a test using one is marked `slow`.
MODEL_FIXTURES = frozenset(
    {"tiny_tokenizer_dir", "tiny_model_dir", "tiny_adapter_dir", "scripted_model_dir",
     "transformers_server"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
