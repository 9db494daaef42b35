"""The example a format error shows: one complete reply that parses and runs (reasoning, then
one action on the repository's root), and a line naming every tool with its arguments.

Never a shape with placeholders: Qwen2.5-Coder-0.5B-Instruct copied `{"name": "TOOL_NAME", ...}`
from one in 3 of 5 bad replies. A model that copies this example views the repository, which is
a fine first step, and one that keeps copying it repeats an action with the same result, which
`agent_core.stuck` tells it. Each dialect builds its default example here from its own `render`
and tools; a session builds it from its prompt profile's tools and its path alias.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_core.actions import Action, Bash, StrReplaceEditor

EXAMPLE_HEADER = "A complete reply looks like this (your own reasoning and action in its place):"
THOUGHT = "First I look at the files in the repository."
REPO_PATH = "/testbed"
TOOLS_LEAD = "You can use:"


@dataclass(frozen=True)
class ToolWords:
    """A tool as the example's tool line names it: `str_replace_editor (command, path, ...)`."""

    name: str
    arguments: tuple[str, ...] = ()
    written: str = ""  # how the line shows it when not `name (arguments)`, e.g. `bash <command>`

    def shown(self) -> str:
        if self.written:
            return self.written
        return f"{self.name} ({', '.join(self.arguments)})" if self.arguments else self.name


@dataclass(frozen=True)
class Example:
    reply: str  # a complete reply in the dialect: reasoning, then one action
    tools: str  # `You can use: bash (command); ...; submit.`

    @property
    def text(self) -> str:
        """What the format error shows, after the problem."""
        return f"{EXAMPLE_HEADER}\n{self.reply}\n{self.tools}"


def example_action(tools: Sequence[ToolWords], repo_path: str = REPO_PATH) -> Action:
    """Viewing the repository's root: with the editor where there is one, else `ls`."""
    if any(tool.name == "str_replace_editor" for tool in tools):
        return StrReplaceEditor(command="view", path=repo_path)
    return Bash(f"ls {repo_path}")


def build_example(
    render: Callable[..., str], tools: Sequence[ToolWords], repo_path: str = REPO_PATH,
) -> Example:
    """The example of a dialect whose `render(action, thought)` writes a reply, offering `tools`."""
    reply = render(example_action(tools, repo_path), THOUGHT)
    return Example(reply, f"{TOOLS_LEAD} {'; '.join(tool.shown() for tool in tools)}.")
