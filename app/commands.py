"""navtui's subcommands: one table, each row a real subcommand with its own `--help`.

A row names the module holding `add_<name>_args(parser)` and `<name>_main(args) -> int` (and,
when plain `parse_args` is not enough, `parse_<name>_args(parser, argv)`); the module is
imported only when its subcommand runs. `navtui --help` lists the rows, and a word that is
neither a subcommand nor a path is answered with the closest one (`did_you_mean`).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Subcommand:
    name: str
    usage: str  # the arguments after the name, for `navtui --help`
    summary: str
    module: str = "app.subcommands"

    def run(self, argv: list[str], make_parser: Callable[..., argparse.ArgumentParser]) -> int:
        """Parse `argv` with this subcommand's own parser and run it; the exit code."""
        module = importlib.import_module(self.module)
        stem = self.name.replace("-", "_")
        parser = make_parser(prog=f"navtui {self.name}", description=self.summary)
        getattr(module, f"add_{stem}_args")(parser)
        parse = getattr(module, f"parse_{stem}_args", None)
        args = parse(parser, argv) if parse is not None else parser.parse_args(argv)
        if isinstance(args, int):  # the parser refused the input and said why
            return args
        return getattr(module, f"{stem}_main")(args)


SUBCOMMANDS: dict[str, Subcommand] = {
    command.name: command
    for command in (
        Subcommand("sessions", "[REPO]", "the sessions logged for a repository"),
        Subcommand("export", "ID|last --format F [REPO]", "a session as replay, training data, …"),
        Subcommand("rewind", "ID --to N [REPO]", "a session's files and conversation back to a step",
                   "app.branch_cli"),
        Subcommand("fork", "ID --at N [REPO]", "a new session sharing one's history up to a step",
                   "app.branch_cli"),
        Subcommand("batch", "INSTANCES.jsonl --workers N",
                   "many instances headless, in worktrees"),
        Subcommand("demo", "[--keep] [--dir DIR]",
                   "try every key on a throw-away repo", "app.demo"),
        Subcommand("config", "[show|path|edit]", "show, locate or edit the settings file"),
        Subcommand("doctor", "[--timeout S]", "what is installed, cached, reachable"),
        Subcommand("finetune", "REPO --model BASE --out DIR",
                   "a new LoRA from your approvals, rejections and edits", "app.finetune"),
        Subcommand("tasks", "REPO [-o FILE]",
                   "test-checked tasks from the repository's own fixes", "app.tasks"),
        Subcommand("eval", "REPO --tasks FILE --adapter A [--adapter B ...]",
                   "resolved rates of adapters on those tasks, paired", "app.eval_cmd"),
        Subcommand("adapters", "[REPO] [list|add|promote|rollback|export]",
                   "adapter versions, which is current, merged export", "app.adapters_cmd"),
    )
}


def help_epilog() -> str:
    """The subcommands as `navtui --help` lists them."""
    width = max(len(f"navtui {c.name} {c.usage}") for c in SUBCOMMANDS.values())
    rows = [f"  {f'navtui {c.name} {c.usage}':<{width}}  {c.summary}" for c in SUBCOMMANDS.values()]
    return "subcommands (each has its own --help):\n" + "\n".join(rows)


def did_you_mean(word: str) -> str | None:
    """The subcommand `word` was probably meant to be (difflib), if any is close."""
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def not_a_subcommand(repo: str | None) -> str | None:
    """Why REPO, no path but a word, was a mistyped subcommand (None when it may be a path)."""
    if repo is None or Path(repo).expanduser().exists():
        return None
    meant = did_you_mean(repo)
    if meant is not None:
        return f"{repo!r} is neither a subcommand nor a path: did you mean `navtui {meant}`?"
    if "/" not in repo:
        return (f"{repo!r} is neither a subcommand ({', '.join(SUBCOMMANDS)}) nor a path; "
                "`navtui --help` lists both")
    return None


def resume_line(session_id: str, root: Path | str) -> str:
    """What every way out of a session prints: how to come back to it."""
    return (f"navtui: session {session_id} is saved; continue it with: "
            f"navtui --resume {shlex.quote(session_id)} {shlex.quote(str(root))}")
