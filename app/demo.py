"""`navtui demo`: a small buggy repository and a scripted model that listens, so every key can be tried.

No GPU and no download. The demo model (`DemoBackend`) follows `demo_session.jsonl`, one beat per
step, but reads the conversation in each prompt to decide where it is: a rejected step gets the
beat's alternative (quoting the user's feedback), undo and rewind shorten the conversation and so
move it back, a stopped turn is simply written again, and it answers the user's messages. Turns
stream with a delay per chunk so they read like a model typing. The repository is made in a
temporary directory and deleted afterwards (unless --dir or --keep).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_core.backends.base import Backend, Prompt, Usage
from agent_core.backends.token_estimate import estimate_prompt_tokens

if TYPE_CHECKING:
    from agent_core.session import Session

SCRIPT = Path(__file__).with_name("demo_session.jsonl")

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


@dataclass
class Beat:
    """One step of the demo script: what the model proposes, and what it proposes instead when
    that was rejected (`{feedback}` in it becomes the user's words)."""

    output: str
    after_reject: str


def load_beats(path: Path = SCRIPT) -> list[Beat]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Beat(line["output"], line["after_reject"]) for line in lines]


NOTED = "Noted what you told me"


@dataclass
class Place:
    """Where the conversation in a prompt leaves the demo: the beat to propose, how many times in
    a row that beat was rejected (and the last feedback), and what the user said since."""

    beat: int = 0
    rejections: int = 0
    feedback: str = ""
    user_said: tuple[str, ...] = ()


def place_in(messages: list[dict[str, Any]]) -> Place:
    """Read a toolcall-dialect conversation: each assistant turn is followed by what came of it
    (its observation); every executed step moves the script on, a rejection does not. What the
    user said counts until a reply has answered it (a message sent while a proposal waited is
    answered in the turn after)."""
    from agent_core import prompts

    rejected = prompts.format_rejection("toolcall", "")
    place = Place()
    said: list[str] = []
    after_assistant = False
    for message in messages[2:]:  # the system prompt and the issue come first
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if message.get("role") == "assistant":
            after_assistant = True
            if NOTED in text:  # it answered what the user said before
                said = []
            continue
        if not after_assistant:
            said.append(text)
        elif text.startswith(rejected):
            place.rejections += 1
            place.feedback = text[len(rejected):].strip().partition("\n")[2].strip()
        else:
            place.beat, place.rejections, place.feedback = place.beat + 1, 0, ""
        after_assistant = False
    place.user_said = tuple(said)
    return place


def _quoted(text: str) -> str:
    """The user's words, on one line, unable to open markup in the demo's reply."""
    line = " ".join(text.split())
    return (line[:117] + "…" if len(line) > 120 else line).replace("<", "‹").replace(">", "›")


class DemoBackend(Backend):
    """A scripted model that reads the conversation it is given (see the module docstring)."""

    name = "demo"

    def __init__(self, beats: list[Beat], *, chunk_size: int = 4, delay: float = 0.02) -> None:
        self.beats = beats
        self.chunk_size = chunk_size
        self.delay = delay
        self.last_usage: Usage | None = None
        self._cancelled = threading.Event()

    def reply(self, prompt: Prompt) -> str:
        """The whole text the demo model writes for `prompt`."""
        place = place_in(prompt.messages or [])
        beat = self.beats[min(place.beat, len(self.beats) - 1)]
        text = beat.after_reject if place.rejections % 2 else beat.output
        feedback = f" (you said: “{_quoted(place.feedback)}”)" if place.feedback else ""
        text = text.replace(" ({feedback})", feedback)
        if place.rejections and not place.rejections % 2:
            text = text.replace("<think>\n", "<think>\nYou rejected my alternative too, so back to my first idea.\n", 1)
        if place.user_said:
            heard = "; ".join(_quoted(said) for said in place.user_said)
            text = text.replace("<think>\n", f"<think>\n{NOTED}: “{heard}”.\n", 1)
        return text

    def stream(self, prompt: Prompt) -> Iterator[str]:
        text = self.reply(prompt)
        self._cancelled.clear()
        try:
            for start in range(0, len(text), self.chunk_size):
                stopped = self._cancelled.wait(self.delay) if self.delay else self._cancelled.is_set()
                if stopped:
                    return
                yield text[start : start + self.chunk_size]
        finally:
            self.last_usage = Usage(prompt_tokens=estimate_prompt_tokens(prompt), estimated=True)

    def cancel(self) -> None:
        self._cancelled.set()

    def count_tokens(self, prompt: Prompt) -> int:
        return estimate_prompt_tokens(prompt)

    def close(self) -> None:
        self.cancel()


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
    """Run the demo; returns the app's exit code."""
    from app.tui import run_tui

    chosen = options.dir
    root = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="navtui-demo-")) / "stats"
    if chosen and root.exists() and any(root.iterdir()):
        print(f"navtui demo: {root} is not empty; pick a new directory with --dir")
        return 1
    repo = make_demo_repo(root)
    delay = 0.0 if options.fast else 0.02
    kept = bool(chosen) or options.keep
    try:
        code = run_tui(demo_session(repo, delay=delay), repo=repo, resumable=kept)
    finally:
        if not kept:
            shutil.rmtree(root.parent, ignore_errors=True)
    if kept:
        print(f"navtui demo: the demo repository is at {repo}")
    else:
        print("navtui demo: the temporary repository was removed (--keep or --dir keeps it)")
    return code
