"""Front ends without a full-screen app: a rich transcript (`--auto`, `--plain`), JSON event lines
(`--json`), and stdin prompts for each proposal (`--plain`).

Each is a Session listener or a Policy callback; none parses model text or touches git.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import IO, TYPE_CHECKING

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

from agent_core.actions import Action, Bash
from agent_core.backends.base import LoadProgress
from agent_core.binary_shown import binary_shown
from agent_core.events import (
    Event,
    FormatError,
    Notice,
    SessionError,
    SessionFinished,
    SessionStarted,
    StepExecuted,
    StepProposed,
    StepRejected,
    StepUndone,
    TokenStreamed,
    TurnStarted,
    UsageReported,
    Waiting,
)
from agent_core.finish import FinishReason
from agent_core.formats import ParseError
from agent_core.git import split_control_diff
from agent_core.sanitize import json_safe, visible
from agent_core.steps import Approve, Decision, EditAction, Observation, Origin, Quit, Reject
from agent_core.trajectory import event_to_dict, redact, redact_event
from agent_core.turn_clock import TurnClock

if TYPE_CHECKING:
    from agent_core.executor.paths import PathMap

FINISH_STYLES = {"success": "bold green", "warning": "bold yellow", "error": "bold red"}


def trim_lines(text: str, head: int, tail: int) -> str:
    """`text` with its middle lines replaced by a marker when it has more than head + tail."""
    lines = text.splitlines()
    if len(lines) <= head + tail:
        return text
    hidden = len(lines) - head - tail
    return "\n".join([*lines[:head], f"... [{hidden} lines not shown] ...", *lines[-tail:]])


# Diff lines a transcript prints, head and tail (`--patch-out` writes the whole patch).
DIFF_HEAD, DIFF_TAIL = 400, 20


def diff_syntax(diff: str) -> Syntax:
    shown = visible(trim_lines(binary_shown(diff), DIFF_HEAD, DIFF_TAIL))
    return Syntax(shown, "diff", theme="ansi_dark", word_wrap=True)


def transcript_console(*, stderr: bool = False) -> Console:
    """rich's Console for a transcript, with rich's terminal checks made once instead of on
    every print: output that is no terminal (a file, a pipe) keeps the size rich found for it,
    a terminal's follows its resizes."""
    found = Console(stderr=stderr, highlight=False)
    if found.is_terminal:
        return Console(stderr=stderr, highlight=False, force_terminal=True)
    return Console(stderr=stderr, highlight=False, force_terminal=False,
                   width=found.width, height=found.height)


class Transcript:
    """Prints a readable account of a session: per step the thought, the action and a trimmed
    observation; at the end the session's diff and why it stopped. `secrets` and URL passwords
    are redacted, control characters made visible; with `paths` (the session's PathMap, which
    can also be set once the session exists) actions and outputs show the real root, never the
    model's `/testbed`."""

    def __init__(
        self, console: Console, *, observation_lines: int = 12, thought_lines: int = 12,
        secrets: Sequence[str] = (), paths: PathMap | None = None,
    ):
        self.console = console
        self.paths = paths
        self.observation_lines = observation_lines
        self.thought_lines = thought_lines
        self.secrets = list(secrets)
        self._usage: UsageReported | None = None
        self._last_error: str | None = None
        self._sandbox = ""

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(redact_event(event, self.secrets))

    def _on_SessionStarted(self, event: SessionStarted) -> None:
        info = event.config.get("backend_info") or {}
        described = " · ".join(f"{k} {v}" for k, v in info.items() if v)
        issue = Text(visible(trim_lines(event.issue.strip(), 12, 3)))
        shown: list[RenderableType] = [
            Rule(Text(f"navtui session {event.session_id}", style="bold")),
            Panel(issue, title="Issue", title_align="left"),
        ]
        if described:
            shown.append(Text(visible(described), style="dim"))
        self._sandbox = visible(event.config.get("sandbox") or "")
        if self._sandbox:
            shown.append(Text(self._sandbox, style="dim"))
        self._print(shown)

    def _on_UsageReported(self, event: UsageReported) -> None:
        self._usage = event

    def _on_StepProposed(self, event: StepProposed) -> None:
        title = f"Step {event.index}"
        if self._usage is not None and self._usage.index == event.index:
            about = "~" if self._usage.context_estimated else ""
            title += (
                f" · context {about}{self._usage.context_tokens}/{self._usage.context_limit} tokens"
            )
        shown: list[RenderableType] = [Rule(Text(title, style="bold cyan"), align="left")]
        thought = event.step.thought.strip()
        if thought:
            half = self.thought_lines // 2
            shown.append(Text(visible(trim_lines(thought, half, half)), style="italic"))
        shown.append(Text.assemble(("▶ ", "bold cyan"), (visible(event.command_shown), "bold")))
        if event.step.notice:
            shown.append(Text(visible(event.step.notice), style="yellow"))
        if self._sandbox and isinstance(event.step.action, Bash):
            shown.append(Text(f"  {self._sandbox}", style="dim"))
        if event.preview_diff:
            shown.append(diff_syntax(event.preview_diff))
        self._print(shown)

    def _on_StepExecuted(self, event: StepExecuted) -> None:
        record = event.record if self.paths is None else self.paths.record_to_user(event.record)
        shown: list[RenderableType] = []
        if record.origin is Origin.USER and record.action is not None:
            title = Text(f"Step {record.index} · your command", style="bold magenta")
            shown.append(Rule(title, align="left"))
            shown.append(Text(visible(f"$ {getattr(record.action, 'command', '')}"), style="bold"))
        if record.observation is not None:
            shown.append(self._observation(record.observation))
        control = split_control_diff(record.diff)[1]
        if control:
            said = "git's own config and hooks changed by this step:"
            shown += [Text(said, style="bold yellow"), diff_syntax(control)]
        self._print(shown)

    def _print(self, shown: list[RenderableType]) -> None:
        """One print per event (each print costs rich a size check and a write)."""
        if shown:
            self.console.print(Group(*shown))

    def _observation(self, observation: Observation) -> Panel:
        half = self.observation_lines // 2
        output = trim_lines(observation.output.rstrip("\n"), half, half)
        body = Text(visible(output) or "(no output)", style="dim")
        parts: list = [body]
        if observation.error:
            parts.append(Text(visible(observation.error), style="red"))
        code = observation.exit_code
        subtitle = None if code is None else f"exit {code}"
        style = "red" if code not in (0, None) or observation.error else "green"
        return Panel(Group(*parts), subtitle=subtitle, subtitle_align="right", border_style=style)

    def _on_StepRejected(self, event: StepRejected) -> None:
        feedback = getattr(event.record.decision, "feedback", "")
        said = f": {feedback}" if feedback else ""
        self.console.print(Text(visible(f"✗ rejected{said}"), style="yellow"))

    def _on_FormatError(self, event: FormatError) -> None:
        first = event.message.strip().splitlines()[0] if event.message.strip() else ""
        self.console.print(
            Text(
                f"! reply {event.index} could not be parsed ({event.consecutive} in a row): "
                f"{visible(first)}",
                style="yellow",
            )
        )

    def _on_StepUndone(self, event: StepUndone) -> None:
        paths = ", ".join(event.changed_paths) or "no files"
        message = f"↶ back to step {event.to_index} ({paths} restored)"
        self.console.print(Text(visible(message), style="magenta"))

    def _on_Notice(self, event: Notice) -> None:
        message = event.message if self.paths is None else self.paths.to_user(event.message)
        self.console.print(Text(visible(message), style="dim"))

    def _on_Waiting(self, event: Waiting) -> None:
        self.console.print(Text(visible(f"… {event.describe()}"), style="dim"))

    def _on_SessionError(self, event: SessionError) -> None:
        self._last_error = event.message
        self.console.print(Text(visible(f"error: {event.message}"), style="bold red"))

    def _on_SessionFinished(self, event: SessionFinished) -> None:
        patch = diff_syntax(event.patch) if event.patch.strip() else Text("(no changes)", style="dim")
        style = FINISH_STYLES[FinishReason(event.reason).tone]
        said = event.message == self._last_error  # printed just above
        ending = f"finished: {event.reason}" + ("" if said else f" — {event.message}")
        self._print([Rule(Text("Final diff", style="bold")), patch, Text(visible(ending), style=style)])


class LoadLines:
    """Load progress on stderr: a line per phase, and for counted phases one every `every` s."""

    def __init__(self, stream: IO[str], every: float = 1.0) -> None:
        self.stream = stream
        self.every = every
        self._phase = ""
        self._shown_at = 0.0

    def __call__(self, progress: LoadProgress) -> None:
        now = time.monotonic()
        new_phase = progress.phase != self._phase
        finished_count = progress.total and progress.done == progress.total
        if not (new_phase or finished_count or now - self._shown_at >= self.every):
            return
        self._phase, self._shown_at = progress.phase, now
        self.stream.write(f"loading the model: {progress.describe()}\n")
        self.stream.flush()


class TurnMeter:
    """A compact line per model turn on stderr: tokens and tok/s when the turn ends, redrawn
    from the first token on while it streams (an estimate: `~`) when stderr is a terminal.
    `rates=False` (a replay: no real generation) leaves the rate out."""

    def __init__(self, stream: IO[str], *, live: bool, rates: bool = True,
                 redraw_every: float = 0.25) -> None:
        self.stream = stream
        self.live = live
        self.rates = rates
        self.redraw_every = redraw_every
        self._clock = TurnClock()
        self._drawn_at = 0.0

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            self._clock.start(time.monotonic())
            self._drawn_at = 0.0
        elif isinstance(event, TokenStreamed):
            now = time.monotonic()
            self._clock.feed(event.text, now)
            if self.live and now - self._drawn_at >= self.redraw_every:
                self._drawn_at = now
                rate = self._clock.rate(now) if self.rates else 0.0
                shown = f" · ~{rate:.1f} tok/s" if rate else ""
                self.stream.write(f"\r  step {event.index}: ~{self._clock.tokens} tokens · "
                                  f"{now - self._clock.started:.1f} s{shown}\x1b[K")
                self.stream.flush()
        elif isinstance(event, UsageReported):
            self.stream.write(("\r\x1b[K" if self.live else "") + self.summary(event) + "\n")
            self.stream.flush()

    def summary(self, event: UsageReported) -> str:
        usage, seconds = event.usage, time.monotonic() - self._clock.started
        line = f"  step {event.index}: {usage.new_tokens} tokens in {seconds:.1f} s"
        if self.rates and usage.tokens_per_second:
            line += f" · {usage.tokens_per_second:.1f} tok/s"
        if self.rates and usage.time_to_first_token:
            line += f" · first token after {usage.time_to_first_token:.1f} s"
        return line


class JsonLines:
    """Writes every event as one JSON object per line (`{"type": ..., ...fields}`), `secrets`
    and URL passwords redacted."""

    def __init__(self, stream: IO[str], *, secrets: Sequence[str] = ()) -> None:
        self.stream = stream
        self.secrets = list(secrets)

    def __call__(self, event: Event) -> None:
        data = redact(event_to_dict(event), self.secrets)
        self.stream.write(json_safe(json.dumps(data, ensure_ascii=False)) + "\n")
        self.stream.flush()

    def load_progress(self, progress: LoadProgress) -> None:
        """`{"type": "LoadProgress", "phase": ..., "done": ..., "total": ..., "elapsed": ...}`"""
        self.stream.write(json.dumps({"type": "LoadProgress", **asdict(progress)}) + "\n")
        self.stream.flush()


EDIT_HELP = (
    "Type the replacement action in any dialect (e.g. `Action: bash ls`, a <tool_call>, a "
    '<function=...> block, or {"kind": "bash", "command": "ls"}); end with a line holding only ".".'
)


def approved_line(proposal: StepProposed, decision: Decision, why: str) -> Text:
    """What `--plain` prints for a proposal it approved (or a deny rule rejected) without asking
    (the app's toast)."""
    if isinstance(decision, Reject):
        return Text(f"step {proposal.index} rejected without asking: {why}", style="yellow")
    return Text(f"step {proposal.index} approved without asking: {why}", style="green")


class StdinPrompter:
    """`--plain`: asks on stdin what to do with each proposal. EOF on stdin means quit."""

    def __init__(
        self,
        parse_edit: Callable[[str], Action],
        console: Console,
        read_line: Callable[[str], str] = input,
    ) -> None:
        self.parse_edit = parse_edit
        self.console = console
        self.read_line = read_line

    def __call__(self, proposal: StepProposed) -> Decision:
        while True:
            answer = self._ask("[a]pprove  [r]eject  [e]dit  [q]uit > ")
            if answer is None:
                return Quit()
            choice = answer.strip().lower()[:1]
            if choice == "a":
                return Approve()
            if choice == "q":
                return Quit()
            if choice == "r":
                feedback = self._ask("why (the model reads this; empty for none) > ")
                return Reject(feedback or "")
            if choice == "e":
                decision = self._edit()
                if decision is not None:
                    return decision
                continue
            self.console.print(Text("answer a, r, e or q", style="yellow"))

    def _ask(self, prompt: str) -> str | None:
        try:
            return self.read_line(prompt)
        except EOFError:
            return None

    def _edit(self) -> Decision | None:
        self.console.print(Text(EDIT_HELP, style="dim"))
        lines: list[str] = []
        while (line := self._ask("")) is not None and line.strip() != ".":
            lines.append(line)
        try:
            return EditAction(self.parse_edit("\n".join(lines)))
        except ParseError as error:
            self.console.print(Text(visible(f"not an action: {error}"), style="red"))
            return None
