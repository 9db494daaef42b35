"""What a dialect is: one `Dialect` object per module in `agent_core.formats`.

A dialect bundles how its model writes an action (`parse`, `render`, `span`, `kinds`), where its
turns end (stop strings), how its prompt is laid out (`build_prompt`: one completion text, or chat
messages with or without tools), which prompt profile it uses by default, and how an action it
cannot express is turned into one it can (`equivalent`). The words of the prompt are the
profile's (`agent_core.profiles`); the layout is the dialect's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_core.actions import Action
from agent_core.formats.examples import ToolWords
from agent_core.steps import ProposedStep

ReadFile = Callable[[str], str]


@dataclass
class Turn:
    """One past exchange: the model's raw text, and the observation text that followed it.

    An empty `assistant` is the user speaking between model turns (a message, or a command they
    ran): only its observation is sent.
    """

    assistant: str
    observation: str


@dataclass(frozen=True)
class Dialect:
    """Everything navtui needs to talk to a model of one dialect."""

    name: str
    parse: Callable[[str], ProposedStep]
    render: Callable[..., str]  # (action, thought="") -> the text the model writes
    span: Callable[[str], tuple[int, int] | None]  # where the first action lies, or None
    kinds: frozenset[str]  # the action kinds it can express
    example: str  # a complete reply that parses, and its tools (`examples.py`), quoted in format errors
    stop_after: tuple[str, ...]  # generation ends after these; they stay in the output
    stop_before: tuple[str, ...]  # generation ends before these; they are cut
    default_profile: str  # the prompt profile used unless the preset or the user picks another
    # (prompt, profile, issue, turns, working_dir) -> fills prompt.text or prompt.messages/tools
    build_prompt: Callable[..., None]
    # (action, read_file) -> an equivalent action of a kind this dialect has; ValueError if none
    equivalent: Callable[[Action, ReadFile | None], Action]
    # How the edit screen lays an action out for a person (None: as `render` writes it)
    editable: Callable[[Action], str] | None = None
    # Lower-case hints in a model's, adapter's or preset's name that give this dialect away
    # (`--dialect auto` before the first reply, see `agent_core.formats.dialect_from_names`)
    name_hints: tuple[str, ...] = ()
    # Its tools as a format error's example names them, and whether its prompt carries the
    # profile's tools instead (then the example names those: `prompts.format_example`)
    tools: tuple[ToolWords, ...] = ()
    profile_tools: bool = False
    # How a streaming front end finds the action in a reply still arriving: the text that opens
    # it (`line_start`: only where it opens a line), and a pattern whose first group that
    # matched names the action's kind or tool as soon as it is written.
    action_markers: tuple[str, ...] = ()
    markers_at_line_start: bool = False
    action_name: str = ""

    def edit_text(self, action: Action) -> str:
        return self.editable(action) if self.editable else self.render(action)
