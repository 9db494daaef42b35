"""The `text` dialect: the R2E-Gym SFT model's `Thought:` / `Action:` turns.

A turn reads::

    Thought: The test fails because the loop stops one item early.
    Action: edit src/calc.py 12 13
        for item in items:
            total += item

The prompt ends with `Thought:`, so a reply may start straight with the thought; a leading
`Thought:` is accepted but not needed. Actions:

* `bash <command>` - the command is the rest of the line (or the next line, when the action line
  ends after `bash`). It goes on to later lines only where the command itself does: a line ending
  in `\\`, `&&`, `||` or `|` (continuation), a here-document (up to its terminator line), or a quote left open (up
  to the line that closes it). A fenced ``` block after `bash` is the command. Other lines after
  the command are not run.
* `read <file>`
* `search <pattern> [path]` - a pattern with spaces may be quoted (`search "def foo" src/`), then
  at most one more quoted or plain word is the path. Unquoted, the last word is the path only when
  there are two or more words and it looks like a path (contains `/` or `.`); otherwise all the
  words are the pattern: `search def parse` looks for "def parse", `search parse src/` for "parse"
  in src/.
* `edit <file> <start> <end>` then, from the next line on, the replacement lines verbatim
  (indentation kept; the final line break is not part of them). `end == start - 1` inserts.
* `submit`

The action ends where a line starts with `Observation` (any case), `Thought:`, `Action:` or `## Your turn`
(text a model writes when it runs on past its turn), so those cannot begin a line of a command or
of edit content. A second `Action:` line is a second action: the first is proposed and
`ProposedStep.notice` tells the model the rest were not run. `Submit.result` has no text form.
"""

from __future__ import annotations

import re
import shlex

from agent_core.actions import Action, Bash, Edit, Read, Search, Submit
from agent_core.formats.common import extra_actions_notice
from agent_core.formats.dialect import Dialect
from agent_core.formats.errors import ParseError
from agent_core.formats.examples import ToolWords, build_example
from agent_core.formats.prompting import build_completion
from agent_core.formats.translate import to_text
from agent_core.steps import ProposedStep

NAME = "text"
# The model starts writing the environment's side of the conversation: cut it off there.
STOP_AFTER: list[str] = []
# `Observation` in the cases models write it, with or without a colon, and the next turn's
# header. A server may honour only the first four (OpenAI's limit); the client checks them all.
STOP_BEFORE: list[str] = [
    "\nObservation", "\nOBSERVATION", "\n## Your turn", "\nThought:", "\nobservation"
]
TYPES = ("bash", "read", "search", "edit", "submit")
KINDS = frozenset(TYPES)

# The actions as the R2E card's prompt writes them (`bash <command>`), with what the parser also reads.
TOOLS = (ToolWords("bash", written="bash <command>"), ToolWords("read", written="read <file>"),
         ToolWords("search", written="search <pattern> [<path>]"),
         ToolWords("edit", written="edit <file> <start> <end> (the new lines on the lines below)"),
         ToolWords("submit"))

ACTION_LINE = re.compile(r"^[ \t]*Action:[ \t]*", re.MULTILINE)
END_LINE = re.compile(
    r"^[ \t]*(?:(?i:observation)\b|Thought:|Action:|## Your turn)", re.MULTILINE
)
# A line the command goes on from: a trailing backslash, `&&`, `||` or `|`.
CONTINUED = re.compile(r"(?:\\|&&|\|\|?)[ \t]*\Z")
# A here-document's start (`<<EOF`, `<<-EOF`, `<< 'EOF'`, `<<"EOF"`, `<<\EOF`), not `<<<`.
HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*(['\"]?)\\?([A-Za-z_][\w.-]*)\2")
THOUGHT_PREFIX = re.compile(r"^\s*Thought:[ \t]*")
FENCE = re.compile(r"\A```[^\n`]*\n(.*?)\n?```\Z", re.DOTALL)
FENCED_START = re.compile(r"\A```[^\n`]*\n(.*?)\n?```", re.DOTALL)
QUOTES = ("'", '"')


def span(text: str) -> tuple[int, int] | None:
    """Where the first action lies in `text` (for dialect detection), or None."""
    match = ACTION_LINE.search(text)
    if match is None:
        return None
    end = END_LINE.search(text, match.end())
    return match.start(), len(text) if end is None else end.start()


def fail(problem: str) -> ParseError:
    """A ParseError of this dialect, with its example."""
    return ParseError(problem, NAME, EXAMPLE)


def unquote_path(word: str) -> str:
    """A path as written: shell-quoted when it starts with a quote, plain otherwise."""
    if word.startswith(QUOTES):
        try:
            parts = shlex.split(word)
        except ValueError:
            raise fail(f"Unbalanced quotes in path {word!r}.") from None
        if len(parts) != 1:
            raise fail(f"Expected one path, got {word!r}; quote a path that has spaces.")
        return parts[0]
    return word


def looks_like_path(word: str) -> bool:
    return "/" in word or "." in word


def read_search(args: str) -> Search:
    """`search` arguments by the documented rule (quoted pattern, or last path-like word)."""
    args = args.strip()
    if not args:
        raise fail("search needs a pattern: `search <pattern> [path]`.")
    if args.startswith(QUOTES):
        try:
            words = shlex.split(args)
        except ValueError:
            raise fail(f"Unbalanced quotes in search arguments {args!r}.") from None
        if len(words) not in (1, 2) or not words[0]:
            raise fail(
                "search takes a pattern and an optional path; quote a pattern that has spaces."
            )
        return Search(pattern=words[0], path=words[1] if len(words) == 2 else None)
    split = re.match(r"(.*\S)\s+(\S+)\Z", args, re.DOTALL)
    if split and looks_like_path(split.group(2)):
        return Search(pattern=split.group(1), path=split.group(2))
    return Search(pattern=args)


def read_edit(args: str) -> Edit:
    header, newline, content = args.partition("\n")
    words = header.strip().rsplit(None, 2)
    if len(words) != 3:
        raise fail(
            "edit needs a file and two line numbers: `edit <file> <start> <end>`, then the new "
            "lines below it."
        )
    path, start_text, end_text = words
    try:
        start, end = int(start_text), int(end_text)
    except ValueError:
        raise fail(
            f"edit line numbers must be whole numbers, got {start_text!r} and {end_text!r}."
        ) from None
    if start < 1 or end < start - 1:
        raise fail(
            f"edit lines {start}..{end} are not a valid range: start must be >= 1 and end >= "
            "start - 1 (end = start - 1 inserts before start)."
        )
    if content.endswith("\n"):
        content = content[:-1]
    return Edit(path=unquote_path(path), start=start, end=end, content=content)


def read_action(body: str) -> Action:
    """The action in the text after `Action:` (up to where the action ends)."""
    body = body.lstrip(" \t\n")
    match = re.match(r"(\w+)", body)
    kind = match.group(1).lower() if match else ""
    if match is None or kind not in TYPES:
        shown = body.split("\n", 1)[0][:40]
        raise fail(
            f"Unknown action {shown!r}. The action must be one of: bash <command>, read <file>, "
            "search <pattern> [path], edit <file> <start> <end> (new lines below), submit."
        )
    args = body[match.end():]
    if kind == "bash":
        command = bash_command(args)
        if not command:
            raise fail("bash needs a command: `Action: bash <command>`.")
        return Bash(command=command)
    if kind == "read":
        path = args.split("\n", 1)[0].strip()
        if not path:
            raise fail("read needs a file: `Action: read <file>`.")
        return Read(path=unquote_path(path))
    if kind == "search":
        return read_search(args.split("\n", 1)[0])
    if kind == "edit":
        return read_edit(args)
    return Submit()


def quotes_open(text: str) -> bool:
    try:
        shlex.split(text)
    except ValueError:
        return True
    return False


def bash_command(args: str) -> str:
    """The command of a bash action: its first line, and the lines the command itself continues
    onto (backslash continuation, here-document bodies, an open quote)."""
    body = args.lstrip(" \t")
    if body.startswith("\n"):
        body = body.lstrip("\n")
    if body.startswith("```"):
        fenced = FENCED_START.match(body)
        return fenced.group(1).strip() if fenced else body.strip().strip("`").strip()
    rest = body.split("\n")
    taken = [rest.pop(0)]
    while rest:
        text = "\n".join(taken)
        if not (CONTINUED.search(text) or quotes_open(text)):
            break
        taken.append(rest.pop(0))
    words = [(m.group(3), bool(m.group(1))) for line in taken for m in HEREDOC.finditer(line)]
    taken.extend(heredoc_bodies(words, rest))
    return "\n".join(taken).strip()


def heredoc_bodies(words: list[tuple[str, bool]], rest: list[str]) -> list[str]:
    """Take the here-document bodies (each up to its terminator line) off the front of `rest`."""
    taken: list[str] = []
    for word, strip_tabs in words:
        while rest:
            line = rest.pop(0)
            taken.append(line)
            if (line.lstrip("\t") if strip_tabs else line).rstrip() == word:
                break
    return taken


def parse(text: str) -> ProposedStep:
    """Parse one model turn; raises ParseError with a message for the model."""
    match = ACTION_LINE.search(text)
    if match is None:
        raise fail(
            "No action found. After your thought, write one line starting with `Action:` "
            "followed by bash, read, search, edit or submit."
        )
    end = END_LINE.search(text, match.end())
    body = text[match.end():] if end is None else text[match.end(): end.start()]
    action = read_action(body)
    others = 0 if end is None else len(ACTION_LINE.findall(text, end.start()))
    thought = THOUGHT_PREFIX.sub("", text[: match.start()], count=1).strip()
    return ProposedStep(
        thought=thought,
        action=action,
        raw=text,
        dialect=NAME,
        notice=extra_actions_notice(1 + others, action.kind),
    )


def quote(word: str) -> str:
    """Single-quote `word` for shlex, always (even when it needs no quoting)."""
    return "'" + word.replace("'", "'\"'\"'") + "'"


def path_text(path: str) -> str:
    if not path or "\n" in path:
        raise ValueError(f"path {path!r} cannot be written in the text dialect")
    plain = path == path.strip() and not path.startswith(QUOTES)
    return path if plain else quote(path)


def check_lines(what: str, value: str) -> None:
    """Refuse text that would end the action early when read back."""
    if END_LINE.search(value):
        raise ValueError(
            f"{what} has a line starting with Observation:/Thought:/Action:/## Your turn, which "
            "the text dialect reads as the end of the action"
        )


def action_text(action: Action) -> str:
    """The part after `Action: `."""
    if isinstance(action, Bash):
        command = action.command.strip()
        if command != action.command or not command or FENCE.match(command):
            raise ValueError(
                "a text-dialect bash command must be non-empty, without surrounding whitespace "
                "and not a ``` fenced block"
            )
        check_lines("the command", command)
        if bash_command(" " + command) != command:
            raise ValueError(
                "this multi-line command would not read back whole in the text dialect (only "
                "continued lines, here-documents and open quotes span lines)"
            )
        return f"bash {command}"
    if isinstance(action, Read):
        return f"read {path_text(action.path)}"
    if isinstance(action, Search):
        return f"search {search_text(action)}"
    if isinstance(action, Edit):
        check_lines("the edit content", action.content)
        if action.start < 1 or action.end < action.start - 1:
            raise ValueError(f"edit range {action.start}..{action.end} is not valid")
        header = f"edit {path_text(action.path)} {action.start} {action.end}"
        return f"{header}\n{action.content}\n"
    if isinstance(action, Submit):
        return "submit"
    raise ValueError(
        f"the text dialect has no action for {action.kind!r}; "
        "use agent_core.formats.translate(action, 'text') to get an equivalent one"
    )


def search_text(action: Search) -> str:
    """The plainest `search` arguments that read back as exactly `action`."""
    values = [action.pattern] + ([] if action.path is None else [action.path])
    if not action.pattern or any("\n" in v for v in values):
        raise ValueError("a text-dialect search needs a one-line, non-empty pattern and path")
    plain = " ".join(values)
    if not plain.startswith(QUOTES):
        try:
            if read_search(plain) == action:
                return plain
        except ParseError:
            pass
    return " ".join(quote(v) for v in values)


def render(action: Action, thought: str = "") -> str:
    """The text this dialect's model writes to propose `action`."""
    if ACTION_LINE.search(thought):
        raise ValueError("a thought line starting with Action: would read as the action")
    line = f"Action: {action_text(action)}"
    thought = thought.strip()
    return f"Thought: {thought}\n{line}" if thought else line


EXAMPLE = build_example(render, TOOLS).text  # (quoted in every ParseError of this dialect)

DIALECT = Dialect(
    name=NAME,
    parse=parse,
    render=render,
    span=span,
    kinds=KINDS,
    example=EXAMPLE,
    tools=TOOLS,
    stop_after=tuple(STOP_AFTER),
    stop_before=tuple(STOP_BEFORE),
    default_profile="r2e-card",
    build_prompt=build_completion,
    equivalent=to_text,
    name_hints=("r2e",),
    action_markers=("Action:",),
    markers_at_line_start=True,
    action_name=r"Action:[ \t]*(\w+)",
)
