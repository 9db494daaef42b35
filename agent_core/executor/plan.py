"""Plan mode: the model reads, searches and runs tests, and changes no file.

In the sandbox the kernel enforces it: the repository is mounted read-only at /testbed (the
shell starts again with that mount on each switch), so `echo x > f` fails with EROFS while
/tmp stays writable. The file tools refuse to write either way. Without a sandbox nothing
stops a command from writing, so plan mode runs only the commands on `READ_ONLY_COMMANDS`,
judged on parsed shell like the always-allow rules (`agent_core.policy`): every simple
command of `a && b; c | d` must be on the list, and redirections, substitutions and subshells
are refused.
"""

from __future__ import annotations

from agent_core.actions import Action, Bash, Edit, StrReplaceEditor
from agent_core.policy import split_simple_commands

MODES = ("normal", "plan")
# Commands that read and never write by any argument (`find`'s and git's writing options are
# refused below); without a sandbox plan mode runs these and nothing else.
READ_ONLY_COMMANDS = (
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "pwd", "echo", "stat", "file",
    "diff", "cmp", "nl", "du", "which", "realpath", "basename", "dirname", "cd", "true", "find",
    "git status", "git diff", "git log", "git show", "git grep", "git blame", "git ls-files",
    "git rev-parse",
)
# Options of the listed commands that write or run something else.
_WRITING_OPTIONS = ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0",
                    "-fprintf", "-fls", "--output", "--ext-diff", "--textconv")

ON_NOTE = (
    "navtui: plan mode is on. The repository is read-only now: read, search and run tests "
    "(write scratch files under /tmp), but do not try to change files; explain what you "
    "would change instead."
)
ON_NOTE_UNSANDBOXED = (
    "navtui: plan mode is on. The repository must not change now: read and search only "
    "(bash runs only read-only commands such as ls, cat, grep, find, git diff); explain what "
    "you would change instead."
)
READ_ONLY_NOTE = (
    "navtui: plan mode is on: the repository is mounted read-only, so writing there fails; "
    "/tmp is writable."
)
OFF_NOTE = "navtui: plan mode is off. You may change files again."
WRITE_REFUSED = (
    "navtui: plan mode is on, so the repository is read-only and this edit was not made. "
    "Describe the change instead; the user switches plan mode off to let you make it."
)
BASH_REFUSED = (
    "navtui: plan mode is on and there is no sandbox to mount the repository read-only, so "
    "only read-only commands run ({allowed}), every part of a list or pipeline among them, "
    "without redirections, substitutions or subshells. This command was not run."
)


def read_only_command(command: str) -> bool:
    """Whether every simple command of `command` is on `READ_ONLY_COMMANDS`, with none of the
    options that write, and no redirection or substitution anywhere."""
    commands = split_simple_commands(command)
    if not commands:
        return False
    allowed = [entry.split() for entry in READ_ONLY_COMMANDS]
    for words in commands:
        if not any(words[: len(entry)] == entry for entry in allowed):
            return False
        if any(word.split("=", 1)[0] in _WRITING_OPTIONS for word in words[1:]):
            return False
    return True


def writes_files(action: Action) -> bool:
    """Whether `action` is a file tool's write (an edit, the editor's create/str_replace/insert)."""
    if isinstance(action, Edit):
        return True
    return isinstance(action, StrReplaceEditor) and action.command != "view"


def refusal(action: Action, sandboxed: bool) -> str | None:
    """Why plan mode does not run `action` (None: it runs). In the sandbox a command runs as
    asked (the mount refuses its writes); without one only a read-only command does."""
    if writes_files(action):
        return WRITE_REFUSED
    if isinstance(action, Bash) and not sandboxed and not read_only_command(action.command):
        return BASH_REFUSED.format(allowed=", ".join(READ_ONLY_COMMANDS))
    return None


def switch_note(plan: bool, sandboxed: bool) -> str:
    """What the model is told when plan mode is switched on or off."""
    if not plan:
        return OFF_NOTE
    return ON_NOTE if sandboxed else ON_NOTE_UNSANDBOXED
