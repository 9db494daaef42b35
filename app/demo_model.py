"""The demo's scripted model, `DemoBackend`: it listens to the conversation.

It follows `demo_session.jsonl`, one beat per step, but reads the conversation in each prompt
to decide where it is: a rejected step gets the beat's alternative (quoting the user's
feedback), undo and rewind shorten the conversation and so move it back, a stopped turn is
simply written again, and it answers the user's messages. Turns stream with a delay per chunk
so they read like a model typing. `navtui demo` (`app.demo`) runs it on a throw-away
repository; a resumed demo session gets it from `app.compose`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.backends.base import Backend, Prompt, Usage
from agent_core.backends.replay import paced_chunks
from agent_core.backends.spec import BackendConfig, BackendSpec
from agent_core.backends.token_estimate import estimate_prompt_tokens

SCRIPT = Path(__file__).with_name("demo_session.jsonl")


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
    generates = False

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
            yield from paced_chunks(text, self.chunk_size, self.delay, self._cancelled)
        finally:
            self.last_usage = Usage(prompt_tokens=estimate_prompt_tokens(prompt), estimated=True)

    def cancel(self) -> None:
        self._cancelled.set()

    def count_tokens(self, prompt: Prompt) -> int:
        return estimate_prompt_tokens(prompt)

    def close(self) -> None:
        self.cancel()


def _no_check(_config: BackendConfig) -> None:
    """The demo needs nothing: its script ships with navtui."""


# Not one of `--backend`'s choices: `app.compose` builds it for a resumed demo session.
DEMO_SPEC = BackendSpec(
    "demo", _no_check, lambda _config, _progress, _backoff: DemoBackend(load_beats()),
    summary="navtui demo's scripted model", scripted=True,
)
