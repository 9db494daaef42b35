"""navtui's command-line arguments: the main parser, `navtui batch`'s, and every `add_*_args`
group they share.

Nothing here builds a session (that is `app.compose`) or runs one (`app.cli`). Each `Parser`
keeps a public table of its options (`parser.options`, see `app.options`): `app.config` reads
it to know which settings the config file may hold.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import Any, NoReturn

from agent_core import __version__
from agent_core.backends.factory import BACKENDS, SPECS
from agent_core.backends.presets import PRESETS
from agent_core.executor.plan import MODES
from agent_core.executor.sandbox import SANDBOX_MODES
from agent_core.formats import DIALECTS
from agent_core.profiles import PROFILES
from app.commands import help_epilog
from app.options import OptionGroup, OptionTable


class CliError(Exception):
    """Bad input on the command line; the message says what to change."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error exits 1 (2 means "stopped by a limit" for navtui) and names
    the flag or choice a typo was probably meant to be; no flag is taken by a prefix
    (`--mode` is not `--model`); and every option added (here, in its argument groups or its
    mutually exclusive groups) is recorded in `self.options`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._recording = False  # argparse's own set-up (its groups, -h) is no setting
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.options = OptionTable(prefix_chars=self.prefix_chars, allow_abbrev=self.allow_abbrev)
        self._recording = True

    def add_argument(self, *flags: str, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*flags, **kwargs)
        if self._recording:
            self.options.record(action, kwargs.get("action"))
        return action

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        group = super().add_argument_group(*args, **kwargs)
        return OptionGroup(group, self.options) if self._recording else group

    def add_mutually_exclusive_group(self, *, required: bool = False) -> Any:
        group = super().add_mutually_exclusive_group(required=required)
        return OptionGroup(group, self.options, self.options.new_exclusive_group())

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._argv = list(sys.argv[1:] if args is None else args)  # for `error`'s hint
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        flags = ["--help", *(flag for option in self.options for flag in option.flags)]
        unknown = [word for word in getattr(self, "_argv", ())
                   if word.startswith("--") and " " not in word and word != "--"
                   and word.split("=", 1)[0] not in flags]
        if unknown:  # a typo (the first one argparse trips on may be the flag it hides)
            message = f"unrecognized arguments: {' '.join(unknown)}"
        hint = typo_hint(message, flags)
        self.exit(1, f"{self.prog}: error: {message}{hint}\n")


UNRECOGNIZED = re.compile(r"^unrecognized arguments: (?P<words>.*)$")
INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)$")


def typo_hint(message: str, flags: list[str]) -> str:
    """`; did you mean --issue?` for argparse's `unrecognized arguments: --issu x` (and the
    same for an invalid choice), when a flag or choice is close; else ""."""
    if found := UNRECOGNIZED.match(message):
        for word in found["words"].split():
            flag = word.split("=", 1)[0]
            if flag.startswith("-") and (close := difflib.get_close_matches(flag, flags, n=1)):
                return f"; did you mean {close[0]}?"
        return "; `navtui --help` lists the flags"
    if found := INVALID_CHOICE.search(message):
        choices = [choice.strip(" '") for choice in found["choices"].split(",")]
        if close := difflib.get_close_matches(found["word"], choices, n=1):
            return f"; did you mean {close[0]!r}?"
    return ""


def backend_help() -> str:
    """`hf: local transformers; openai: ... (default: replay with --script, ...)`, from the
    registered backends."""
    kinds = "; ".join(f"{name}: {SPECS[name].summary}" for name in BACKENDS)
    defaults = ", ".join(spec.default_note for spec in SPECS.values() if spec.default_note)
    return f"{kinds} (default: {defaults})" if defaults else kinds


def add_backend_args(parser: Parser, *, adapters: bool = False) -> None:
    """The flags that choose and load the model (shared with `navtui batch`); `adapters`:
    `--adapter` is repeatable and required (`navtui eval`)."""
    group = parser.add_argument_group("model")
    group.add_argument(
        "--backend", choices=BACKENDS, help=backend_help(),
    )
    group.add_argument(
        "--model", metavar="NAME|ID|PATH",
        help=f"preset ({', '.join(PRESETS)}), Hugging Face id or local directory; "
        "with --backend openai, the name the server serves",
    )
    if adapters:
        group.add_argument("--adapter", action="append", required=True, metavar="A",
                           help="an adapter to evaluate (repeat it; the first is the reference)")
    else:
        group.add_argument("--adapter", metavar="ID|PATH",
                           help="LoRA adapter (overrides a preset's)")
    quant = group.add_mutually_exclusive_group()
    quant.add_argument("--load-in-4bit", action="store_true", help="nf4 weights via bitsandbytes")
    quant.add_argument("--load-in-8bit", action="store_true", help="int8 weights via bitsandbytes")
    group.add_argument(
        "--base-url", metavar="URL", help="OpenAI-compatible server, e.g. http://localhost:8000/v1"
    )
    group.add_argument(
        "--api-key", metavar="KEY",
        help="server API key; better NAVTUI_API_KEY / OPENAI_API_KEY, since a flag is visible "
        "to every process (ps); redacted from logs and transcripts",
    )
    group.add_argument(
        "--script", metavar="FILE", help='replay script: JSON Lines of {"output": ...}'
    )
    group.add_argument(
        "--request-timeout", type=positive_float, metavar="S",
        help="with --backend openai: seconds to wait for each piece of the reply, prefill "
        "included (default 300)",
    )
    group.add_argument(
        "--tokenizer", metavar="ID|PATH",
        help="with --backend openai: tokenizer for exact prompt token counts (default: estimate)",
    )
    group.add_argument(
        "--threads", type=positive_int, metavar="N",
        help="with --backend hf on CPU: torch threads (default: NAVTUI_THREADS, else the number "
        "of physical cores)",
    )
    group.add_argument(
        "--dialect", choices=("auto", *DIALECTS), default="auto",
        help="the model's action format (default: from the preset or model name, "
        "else detected from its first reply)",
    )
    group.add_argument(
        "--prompt-profile", metavar="NAME|FILE",
        help=f"the words the model reads: {', '.join(PROFILES)} or a profile YAML file "
        "(default: the preset's, else the dialect's: swesmith for toolcall/xml, r2e-card for text)",
    )
    group.add_argument(
        "--no-submit-review", action="store_true",
        help="end at the model's first submit (default with a model backend: answer it with the "
        "profile's review message and the diff, as in SWE-smith's training, and end at the next "
        "submit)",
    )


def add_limit_args(parser: Parser) -> None:
    """Step, time and command limits (shared with `navtui batch`)."""
    group = parser.add_argument_group("limits")
    group.add_argument(
        "--max-steps", type=positive_int, default=50, metavar="N",
        help="proposals executed or rejected before stopping (default 50)",
    )
    group.add_argument(
        "--max-time", type=positive_float, metavar="S", help="wall-clock seconds for the session"
    )
    group.add_argument(
        "--command-timeout", type=positive_float, default=120.0, metavar="S",
        help="seconds one command may run before it is killed (default 120)",
    )
    group.add_argument(
        "--max-new-tokens", type=positive_int, metavar="N",
        help="tokens one reply may generate (default: the preset's, else 1024)",
    )
    group.add_argument(
        "--max-stuck", type=positive_int, default=2, metavar="N",
        help="headless runs stop (reason `stuck`, exit 2) after N turns in which the model "
        "repeated itself (default 2)",
    )


def add_sandbox_args(parser: Parser) -> None:
    """Where the model's commands run (see README, "Safety")."""
    group = parser.add_argument_group("sandbox")
    group.add_argument(
        "--sandbox", choices=SANDBOX_MODES, default="auto",
        help="run commands in a bubblewrap sandbox: the repo at /testbed, the system and your "
        "toolchain read-only, no secrets, no network (auto: when bwrap works here, else say "
        "why; on: refuse without it)",
    )
    group.add_argument(
        "--network", action="store_true",
        help="let sandboxed commands use the network (e.g. pip install)",
    )
    group.add_argument(
        "--writable", action="append", default=[], metavar="PATH",
        help="a directory the sandbox may write to, e.g. a venv or cache (repeatable)",
    )
    group.add_argument(
        "--expose", action="append", default=[], metavar="PATH",
        help="a file or directory shown read-only inside the sandbox beside the toolchain on "
        "PATH, e.g. ~/datasets (repeatable; credentials and histories never are)",
    )


def add_patch_scope_args(group: Parser | OptionGroup) -> None:
    """What the patch holds (shared with `navtui batch`; see agent_core.patch_scope)."""
    group.add_argument(
        "--keep-pycache", action="store_true",
        help="keep Python bytecode (__pycache__/, *.pyc) that no ignore rule covers in the patch "
        "(left out by default, with a notice)",
    )


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def build_parser() -> Parser:
    parser = Parser(
        prog="navtui",
        usage="navtui [options] [REPO]\n       navtui SUBCOMMAND [options]",
        description="Fix code with a local model: it proposes one action at a time, you approve.",
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"navtui {__version__}")
    parser.add_argument("--auto", action="store_true", help="approve every action (headless)")
    parser.add_argument(
        "--plain", action="store_true", help="ask on stdin for each action, no full-screen app"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON event per line, not a transcript"
    )
    parser.add_argument(
        "--mode", choices=MODES,
        help="plan: the model reads, searches and runs tests but changes no file (the sandbox "
        "mounts the repository read-only; without one, only read-only commands run); p "
        "switches it in the app (default: normal; with --resume, the mode the session was "
        "left in)",
    )
    parser.add_argument(
        "--quiet", action="store_true",
        help="headless: no load progress or per-turn token lines on stderr",
    )
    issue = parser.add_mutually_exclusive_group()
    issue.add_argument("--issue", metavar="TEXT", help="the issue to fix")
    issue.add_argument("--issue-file", metavar="FILE", help="read the issue from a file")
    add_backend_args(parser)
    add_limit_args(parser)
    add_sandbox_args(parser)
    out = parser.add_argument_group("output")
    out.add_argument("--patch-out", metavar="FILE", help="write the session's patch here")
    add_patch_scope_args(out)
    out.add_argument(
        "--trajectory", metavar="FILE",
        help="session log path (default: .git/navtui/sessions/<id>.jsonl)",
    )
    parser.add_argument(
        "--resume", metavar="ID|last",
        help="continue a logged session (see `navtui sessions`); `last`: the repository's newest",
    )
    parser.add_argument(
        "--force", action="store_true",
        help="with --resume: put the last checkpoint back even over files changed since the "
        "session stopped (they are kept by default; forced, they are saved in a ref first)",
    )
    parser.add_argument(
        "repo", metavar="REPO", nargs="?",
        help="a local git repository (default: the one containing the current directory)",
    )
    return parser


def add_batch_args(parser: Parser) -> None:
    """`navtui batch`'s own flags and the model, limit, sandbox and patch flags it shares."""
    parser.add_argument("instances", metavar="INSTANCES.jsonl",
                        help="one JSON object per line: instance_id, repo, base_commit, "
                             "problem_statement")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="instances run at once (useful against a server that batches)")
    parser.add_argument("--output", default="navtui-batch", metavar="DIR",
                        help="predictions.jsonl and trajectories/ go here (default: navtui-batch)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per line on stdout: each instance's result and "
                             "the progress counts after it")
    parser.add_argument("--script-dir", metavar="DIR",
                        help="replay a script per instance: DIR/<instance_id>.jsonl "
                             "(implies --backend replay)")
    parser.add_argument("--slice", metavar="A:B",
                        help="run only the instances A to B-1 of the file (Python's slice: 0:50, "
                             ":10, 100:)")
    parser.add_argument("--shard", metavar="I/N",
                        help="run only every N-th instance from the I-th (I from 0), after "
                             "--slice: N machines each run one I into an output of their own")
    parser.add_argument("--repos-dir", metavar="DIR",
                        help="existing clones of repos given as owner/name (DIR/owner__name or "
                             "DIR/owner/name); without it they are cloned once into navtui's "
                             "cache")
    parser.add_argument("--repos-url", metavar="URL", default="https://github.com",
                        help="where owner/name repos are cloned from (default: "
                             "https://github.com)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="run each instance as a task on this Ray cluster (`auto`, or "
                             "HOST:6379; needs the [ray] extra) and gather the predictions here")
    add_backend_args(parser)
    add_limit_args(parser)
    add_sandbox_args(parser)
    add_patch_scope_args(parser)


def batch_parser() -> Parser:
    """`navtui batch`'s parser (its settings are valid in the config file too)."""
    parser = Parser(prog="navtui batch")
    add_batch_args(parser)
    return parser
