"""What each dialect's model reads: system prompt, issue, past turns, observations.

`build_prompt(dialect, issue, turns)` gives a `Prompt` with the dialect's stop strings.
A `Turn` is one past exchange: the model's raw text and the observation text that followed it,
already made by one of the `format_*` functions below. A turn with an empty `assistant` is the user
speaking between model turns (a message, or a command they ran): only its observation is sent.

Shapes:

* text — one raw completion string in `Prompt.text` (the R2E-Gym SFT model continues text), kept
  compact because that model was trained at 4,096 tokens::

      You are an expert software engineer fixing bugs.
      ...AVAILABLE ACTIONS list...
      ## Problem:
      <issue>

      ## Your turn:
      Thought: <model text of turn 1, a leading "Thought:" dropped>

      Observation:
      <output>

      ## Your turn:
      Thought:

  Each turn adds `## Your turn:\\nThought: <assistant>\\n\\n<observation>\\n\\n`; the prompt always
  ends with `## Your turn:\\nThought:`, so a prompt is a prefix of the next one (KV-cache reuse).
* toolcall — chat `messages`: system, user (the issue), then per turn
  `{"role": "assistant", "content": raw}` and `{"role": "tool", "content": observation}` (a
  `user` message instead when the assistant text held no `<tool_call>`, e.g. after a format error,
  or when the user spoke); `tools=TOOLS` for `apply_chat_template`.
* xml — chat `messages` in SWE-smith's shape: a system prompt listing the functions, the issue in
  a user message, then assistant turns and `OBSERVATION:` user messages (consecutive user texts
  are joined into one message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent_core.actions import Action, Bash
from agent_core.backends.base import Prompt
from agent_core.formats import dialect_module, toolcall
from agent_core.formats.errors import ParseError
from agent_core.steps import Observation

TEXT_SYSTEM = """You are an expert software engineer fixing bugs.
Work in the repository step by step: each reply is a Thought, then exactly one Action; its
Observation comes back before your next turn.

AVAILABLE ACTIONS:
- bash <command>: run a shell command in the repository root.
- read <file>: show a file with line numbers.
- search <pattern> [path]: list matching lines (grep -rn); quote a pattern that has spaces.
- edit <file> <start> <end>: replace lines start..end (inclusive) with the lines written below
  the Action line, indentation included; end = start - 1 inserts before line start.
- submit: finish once the issue is fixed."""

TOOLCALL_SYSTEM = (
    "You are an expert software engineer that navigates code repositories using bash commands."
)

EDITOR_DESCRIPTION = (
    "View, create and edit files.\n"
    "* `view` shows a file with line numbers (`cat -n`), or lists a directory two levels deep.\n"
    "* `create` writes a new file; it refuses a path that already exists.\n"
    "* `str_replace` replaces `old_str`, which must occur exactly once in the file (whitespace "
    "matters), with `new_str`.\n"
    "* `insert` puts `new_str` after line `insert_line` (0 = top of the file).\n"
    "* `undo_edit` takes back the last edit of the file."
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a bash command in the repository and return its output.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command to run."}
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "str_replace_editor",
            "description": EDITOR_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
                        "description": "What to do.",
                    },
                    "path": {"type": "string", "description": "The file or directory."},
                    "file_text": {"type": "string", "description": "Content for `create`."},
                    "old_str": {
                        "type": "string",
                        "description": "For `str_replace`: the exact text to replace.",
                    },
                    "new_str": {
                        "type": "string",
                        "description": "For `str_replace` and `insert`: the new text.",
                    },
                    "insert_line": {
                        "type": "integer",
                        "description": "For `insert`: the line after which `new_str` goes.",
                    },
                    "view_range": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "description": "For `view`: [first, last] lines; -1 as last: to the end.",
                    },
                },
                "required": ["command", "path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "submit",
            "description": "Finish the task; the changes made so far are the result.",
            "parameters": {"type": "object", "properties": {}, "required": []},
        },
    },
]

XML_FUNCTIONS = """---- BEGIN FUNCTION #1: bash ----
Description: Run a bash command in the repository and return its output.

Parameters:
  (1) command (string, required): The command to run.
---- END FUNCTION #1 ----

---- BEGIN FUNCTION #2: submit ----
Description: Finish the task; the changes made so far are the result.
No parameters are required for this function.
---- END FUNCTION #2 ----

---- BEGIN FUNCTION #3: str_replace_editor ----
Description: View, create and edit files.
* `view` shows a file with line numbers (`cat -n`), or lists a directory two levels deep
* `create` writes a new file; it refuses a path that already exists
* `str_replace` replaces `old_str`, which must occur exactly once in the file (whitespace matters), with `new_str`
* `insert` puts `new_str` after line `insert_line` (0 = top of the file)
* `undo_edit` takes back the last edit of the file

Parameters:
  (1) command (string, required): One of `view`, `create`, `str_replace`, `insert`, `undo_edit`.
Allowed values: [`view`, `create`, `str_replace`, `insert`, `undo_edit`]
  (2) path (string, required): Absolute path of the file or directory, e.g. `/testbed/file.py`.
  (3) file_text (string, optional): Content of the file, for `create`.
  (4) old_str (string, optional): The exact text to replace, for `str_replace`.
  (5) new_str (string, optional): The new text, for `str_replace` and `insert`.
  (6) insert_line (integer, optional): For `insert`: the line after which `new_str` goes.
  (7) view_range (array, optional): For `view`: [first, last] lines, e.g. [11, 12]; [first, -1] shows to the end.
---- END FUNCTION #3 ----"""

XML_SYSTEM = f"""You are a capable assistant that solves tasks by working on a computer.
<IMPORTANT>
* Paths the user gives may not be relative to the current directory: look for a file before working on it.
</IMPORTANT>

You have access to the following functions:

{XML_FUNCTIONS}


To call a function, reply in exactly this format and write nothing after it:

Explain briefly why you make this call.
<function=example_function_name>
<parameter=example_parameter_1>value_1</parameter>
<parameter=example_parameter_2>
A value that
spans several lines
</parameter>
</function>

<IMPORTANT>
Reminder:
- A function call starts with <function= and ends with </function>
- Give every required parameter
- Call one function per reply
- Put your reasoning before the call, never after it
</IMPORTANT>"""

XML_TASK = """<uploaded_files>
{repo}
</uploaded_files>
The code repository is in the directory {repo}. Here is the issue to resolve:

<pr_description>
{issue}
</pr_description>

Change the non-test files in {repo} so that the issue is resolved; the tests are taken care of.
A good way to work: read the code the issue is about, write a script that reproduces the problem
and run it, fix the source, run the script again to confirm, and think about edge cases. Call
submit when you are done."""

SYSTEM_PROMPTS = {"text": TEXT_SYSTEM, "toolcall": TOOLCALL_SYSTEM, "xml": XML_SYSTEM}

TEXT_TURN_HEADER = "## Your turn:\nThought:"
LEADING_THOUGHT = re.compile(r"\A\s*Thought:")
SILENT_SUCCESS = "Your command ran successfully and did not produce any output."


@dataclass
class Turn:
    """One past exchange: the model's raw text, and the observation text that followed it."""

    assistant: str
    observation: str


def build_prompt(
    dialect: str,
    issue: str,
    turns: list[Turn],
    *,
    max_new_tokens: int = 1024,
    repo_path: str = "/testbed",
) -> Prompt:
    """The whole prompt for the next model turn, with the dialect's stop strings.

    `repo_path` is the directory the xml dialect's task message names (the path alias).
    """
    module = dialect_module(dialect)
    prompt = Prompt(
        stop_after=list(module.STOP_AFTER),
        stop_before=list(module.STOP_BEFORE),
        max_new_tokens=max_new_tokens,
    )
    if dialect == "text":
        prompt.text = text_prompt(issue, turns)
    elif dialect == "toolcall":
        prompt.messages = toolcall_messages(issue, turns)
        prompt.tools = TOOLS
    else:
        prompt.messages = xml_messages(issue, turns, repo_path)
    return prompt


def text_prompt(issue: str, turns: list[Turn]) -> str:
    parts = [f"{TEXT_SYSTEM}\n\n## Problem:\n{issue.strip()}\n\n"]
    for turn in turns:
        if turn.assistant.strip():
            said = LEADING_THOUGHT.sub("", turn.assistant, count=1).strip()
            parts.append(f"{TEXT_TURN_HEADER} {said}\n\n")
        parts.append(f"{turn.observation.rstrip()}\n\n")
    parts.append(TEXT_TURN_HEADER)
    return "".join(parts)


def toolcall_messages(issue: str, turns: list[Turn]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": TOOLCALL_SYSTEM},
        {"role": "user", "content": issue.strip()},
    ]
    for turn in turns:
        called = False
        if turn.assistant.strip():
            messages.append({"role": "assistant", "content": turn.assistant})
            called = toolcall.span(turn.assistant) is not None
        messages.append({"role": "tool" if called else "user", "content": turn.observation})
    return messages


def xml_messages(issue: str, turns: list[Turn], repo_path: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": XML_SYSTEM},
        {"role": "user", "content": XML_TASK.format(repo=repo_path, issue=issue.strip())},
    ]
    for turn in turns:
        if turn.assistant.strip():
            messages.append({"role": "assistant", "content": turn.assistant})
        if messages[-1]["role"] == "user":
            messages[-1]["content"] += "\n\n" + turn.observation
        else:
            messages.append({"role": "user", "content": turn.observation})
    return messages


def observation_text(action: Action | None, observation: Observation, exit_code: bool) -> str:
    """Output, error and (when `exit_code`) a non-zero exit status; a placeholder when empty."""
    parts = [p for p in (observation.output.rstrip("\n"), observation.error or "") if p.strip()]
    code = observation.exit_code
    if exit_code and code not in (0, None):
        parts.append(f"[exit code {code}]")
    if parts:
        return "\n".join(parts)
    return SILENT_SUCCESS if isinstance(action, Bash) or action is None else "(no output)"


def wrap(dialect: str, body: str) -> str:
    """The observation envelope each dialect was trained on."""
    dialect_module(dialect)
    if dialect == "text":
        return f"Observation:\n{body}"
    if dialect == "xml":
        return f"OBSERVATION:\n{body}"
    return body


def with_notice(body: str, notice: str | None) -> str:
    return body if not notice else f"{body}\n\n{notice}"


def format_observation(
    dialect: str, action: Action, observation: Observation, *, notice: str | None = None
) -> str:
    """What the model reads after `action` ran; `notice` is `ProposedStep.notice`, if any."""
    body = observation_text(action, observation, exit_code=dialect != "xml")
    return wrap(dialect, with_notice(body, notice))


def format_parse_error(dialect: str, error: ParseError) -> str:
    """What the model reads when its reply could not be parsed."""
    return wrap(dialect, f"Your reply could not be used: {error}")


def format_rejection(dialect: str, feedback: str) -> str:
    """What the model reads when the user rejected its action (with their feedback, if any)."""
    text = "The user rejected this action; it was not run."
    if feedback.strip():
        text += f" Their feedback:\n{feedback.strip()}"
    return wrap(dialect, text)


def format_user_message(dialect: str, text: str) -> str:
    """A message the user typed to the model between turns."""
    dialect_module(dialect)
    if dialect == "text":
        return f"## Message from the user:\n{text.strip()}"
    return text.strip()


def format_user_command(dialect: str, command: str, observation: Observation) -> str:
    """A shell command the user ran themselves, with its result."""
    body = observation_text(None, observation, exit_code=True)
    text = f"The user ran this command in the repository:\n$ {command}\n{body}"
    return wrap(dialect, text)


# --- notes about context trimmed to fit the window (agent_core.context) ---------------------------


def omitted_lines_note(lines: int) -> str:
    """Stands where whole lines of a long observation were cut out."""
    return f"[{lines} lines omitted]"


def omitted_chars_note(chars: int) -> str:
    """Stands where part of a very long line was cut out."""
    return f"[{chars} characters omitted]"


def elided_turns_note(turns: int, lines: int) -> str:
    """Replaces the oldest turns once they no longer fit in the context window."""
    return (
        f"[{turns} earlier step(s) omitted to fit the context window "
        f"({lines} lines of your replies and their observations)]"
    )
