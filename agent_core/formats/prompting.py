"""Prompt layouts the dialects share: one completion text, or chat messages.

The words come from a prompt profile (`agent_core.profiles`); these functions only arrange them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from agent_core.formats.dialect import Turn
from agent_core.profiles import Profile
from agent_core.prompt_types import Prompt

LEADING_THOUGHT = re.compile(r"\A\s*Thought:")
_CALLED_CACHE = 4096  # assistant texts; more than a session's turns


def completion_text(profile: Profile, dialect: str, issue: str, turns: list[Turn], working_dir: str) -> str:
    """The whole prompt as text: the instance, then per turn `<header> <assistant>\\n\\n<observation>\\n\\n`,
    ending with the turn header, so a prompt is a prefix of the next one (KV-cache reuse)."""
    header = profile.turn_header
    parts = [
        profile.render(
            "instance_template", dialect, problem_statement=issue.strip(), working_dir=working_dir
        )
        + "\n\n"
    ]
    for turn in turns:
        if turn.assistant.strip():
            said = LEADING_THOUGHT.sub("", turn.assistant, count=1).strip()
            parts.append(f"{header} {said}\n\n")
        parts.append(f"{turn.observation.rstrip()}\n\n")
    parts.append(header)
    return "".join(parts)


def build_completion(
    prompt: Prompt, profile: Profile, dialect: str, issue: str, turns: list[Turn], working_dir: str
) -> None:
    prompt.text = completion_text(profile, dialect, issue, turns, working_dir)


def chat_messages(
    profile: Profile,
    dialect: str,
    issue: str,
    turns: list[Turn],
    working_dir: str,
    called: Callable[[str], bool] | None,
) -> list[dict[str, Any]]:
    """System, the instance as the first user message, then the turns.

    With `called` (the assistant text held a tool call), an observation answering a call is a
    `tool` message; without it every observation is a user message and consecutive user texts
    are joined into one (SWE-smith's xml conversations).
    """
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": profile.render("system_template", dialect)},
        {
            "role": "user",
            "content": profile.render(
                "instance_template", dialect, problem_statement=issue.strip(), working_dir=working_dir
            ),
        },
    ]
    for turn in turns:
        answered = False
        if turn.assistant.strip():
            messages.append({"role": "assistant", "content": turn.assistant})
            answered = called is not None and called(turn.assistant)
        if answered:
            messages.append({"role": "tool", "content": turn.observation})
        elif called is None and messages[-1]["role"] == "user":
            messages[-1]["content"] += "\n\n" + turn.observation
        else:
            messages.append({"role": "user", "content": turn.observation})
    return messages


def chat_builder(called: Callable[[str], bool] | None, *, tools: bool) -> Callable[..., None]:
    """A `Dialect.build_prompt` that lays the prompt out as chat messages (plus the profile's
    tools when `tools`)."""
    if called is not None:
        # Each prompt holds every earlier turn: parse each assistant text once, not once a step.
        called = functools.lru_cache(maxsize=_CALLED_CACHE)(called)

    def build(
        prompt: Prompt, profile: Profile, dialect: str, issue: str, turns: list[Turn], working_dir: str
    ) -> None:
        prompt.messages = chat_messages(profile, dialect, issue, turns, working_dir, called)
        if tools:
            prompt.tools = profile.tools

    return build
