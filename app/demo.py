"""`navtui demo`: a small buggy repository and a scripted model that listens, so every key can be tried.

No GPU and no download. The model is `app.demo_model.DemoBackend`: it follows a script but
reads the conversation, so rejecting, undoing, stopping and messages all get answers. The
repository is made in a temporary directory and deleted afterwards (unless --dir or --keep).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from app.demo_model import SCRIPT, DemoBackend, load_beats

if TYPE_CHECKING:
    from agent_core.session import Session


ISSUE = """\
# `mean()` is wrong for every input

`stats.mean([2, 4, 6])` returns `3.0`, but the mean of those numbers is `4.0`.
The test suite shows it too: `python3 -m unittest -q` fails in `test_mean`.
`median()` looks fine.
"""

FILES = {
    "stats/__init__.py": "from stats.core import mean, median\n\n__all__ = [\"mean\", \"median\"]\n",
    "stats/core.py": (
        '"""Small statistics helpers."""\n'
        "\n"
        "\n"
        "def mean(values):\n"
        '    """Arithmetic mean of a non-empty sequence."""\n'
        "    return sum(values) / (len(values) + 1)\n"
        "\n"
        "\n"
        "def median(values):\n"
        '    """Middle value of a non-empty sequence (mean of the two middle ones if even)."""\n'
        "    ordered = sorted(values)\n"
        "    middle = len(ordered) // 2\n"
        "    if len(ordered) % 2:\n"
        "        return ordered[middle]\n"
        "    return (ordered[middle - 1] + ordered[middle]) / 2\n"
    ),
    "tests/__init__.py": "",
    "tests/test_core.py": (
        "import unittest\n"
        "\n"
        "from stats import mean, median\n"
        "\n"
        "\n"
        "class CoreTest(unittest.TestCase):\n"
        "    def test_mean(self):\n"
        "        self.assertEqual(mean([2, 4, 6]), 4)\n"
        "\n"
        "    def test_median(self):\n"
        "        self.assertEqual(median([3, 1, 2]), 2)\n"
        "        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n"
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    unittest.main()\n"
    ),
    "README.md": "# stats\n\nTiny statistics helpers (with a planted bug for the navtui demo).\n",
    ".gitignore": "__pycache__/\n*.pyc\n",
}

GIT_IDENTITY = ["-c", "user.name=navtui demo", "-c", "user.email=demo@navtui.invalid",
                "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]


def make_demo_repo(root: Path) -> Path:
    """Write the demo project to `root` and commit it (branch main)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "stats: mean and median"]):
        subprocess.run(["git", *GIT_IDENTITY, *args], cwd=root, check=True, capture_output=True)
    return root


def demo_session(repo: Path, *, delay: float = 0.02, chunk_size: int = 4) -> Session:
    """A session on `repo` whose model is the demo script, logged like any other
    (so `navtui --resume ID REPO` works on a kept demo repo)."""
    from agent_core.executor import Executor
    from agent_core.session import Session, SessionConfig
    from agent_core.trajectory import TrajectoryWriter, default_path, repo_state_dir
    from agent_core.workspace import Workspace

    info = {"backend": "demo", "script": str(SCRIPT), "dialect": "toolcall", "model": "demo (scripted)"}
    config = SessionConfig(dialect="toolcall", context_window=16_384, max_steps=20, backend_info=info,
                           submit_review=False)  # the script's submit is its last word
    session = Session(
        workspace=Workspace.open(repo),
        executor=Executor(repo, command_timeout=config.command_timeout),
        backend=DemoBackend(load_beats(), chunk_size=chunk_size, delay=delay),
        issue=ISSUE,
        config=config,
    )
    session.subscribe(TrajectoryWriter(default_path(repo_state_dir(repo), session.id)))
    return session


def add_demo_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", help="make the demo repo here instead of a temporary directory")
    parser.add_argument("--fast", action="store_true", help="stream the recorded turns without delay")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary repo afterwards (its session can be resumed)")


def demo_main(options: argparse.Namespace) -> int:
    """Run the demo with the config file's keymap, theme and rules; returns the app's exit
    code."""
    from app.config import ConfigError
    from app.keymap import app_settings
    from app.tui import run_tui

    try:
        settings = app_settings()
    except ConfigError as error:
        print(f"navtui demo: {error}", file=sys.stderr)
        return 1
    chosen = options.dir
    root = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="navtui-demo-")) / "stats"
    if chosen and root.exists() and any(root.iterdir()):
        print(f"navtui demo: {root} is not empty; pick a new directory with --dir", file=sys.stderr)
        return 1
    repo = make_demo_repo(root)
    delay = 0.0 if options.fast else 0.02
    kept = bool(chosen) or options.keep
    try:
        code = run_tui(demo_session(repo, delay=delay), repo=repo, resumable=kept,
                       settings=settings)
    finally:
        if not kept:
            shutil.rmtree(root.parent, ignore_errors=True)
    if kept:
        print(f"navtui demo: the demo repository is at {repo}")
    else:
        print("navtui demo: the temporary repository was removed (--keep or --dir keeps it)")
    return code
