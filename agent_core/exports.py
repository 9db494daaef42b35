"""Turn a session log into other tools' formats: replay script, SFT data, SWE-bench predictions.

Every export works on the session's *effective history*: the steps that ran and were not undone,
in order, each with the action that really ran. So:

* a step the user edited contributes the user's action (rendered in the target dialect, with the
  model's thought), never the model's original;
* rejected proposals are dropped, together with turns that could not be parsed: training data
  and replays should hold actions someone stood behind, and a rejected action is not one (its
  feedback is lost with it; the model's next turn, which read it, is kept);
* undone steps are dropped, as is anything after them that was undone with them;
* commands the user ran themselves stay as what they were for the model: a note with the
  command's output (in `replay` they become bash turns, so a re-run runs them too);
* messages the user wrote to the model stay as user notes in the SFT formats (a replay script
  holds model turns only, so `replay` leaves them out).

Formats (one JSON object per line):

* `replay`   — `{"output": <raw model text>}` per model turn, for `--backend replay --script`;
  re-running it with `--auto` on the same base state reproduces the session's final diff.
* `sft-toolcall` — one line per session: `{"messages": [...], "tools": [...]}` exactly as the
  toolcall dialect prompts its model (system, issue, assistant `<tool_call>` turns, `tool`
  observations), ready for `apply_chat_template(messages, tools=tools)`.
* `sft-text` — one line per model turn: `{"prompt": ..., "completion": ...}` where `prompt` is
  the text dialect's whole prompt up to that turn (ending in `## Your turn:\\nThought:`) and
  `completion` is what the model wrote after it; `prompt + completion` is a prefix of the next
  line's prompt.
* `swebench` — one line: `{"instance_id", "model_name_or_path", "model_patch"}`.

Actions are translated when the target dialect lacks their kind (e.g. a text-dialect `edit`
exported as a toolcall `str_replace_editor`); turning an edit into another kind of edit needs the
file as it was before the step, read from the previous checkpoint in the repository (`repo`).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from agent_core import formats, prompts
from agent_core.actions import Action, Bash
from agent_core.events import StepExecuted, StepRejected, StepUndone, UserMessage
from agent_core.git.runner import GitRunner
from agent_core.patch_scope import patch_scope
from agent_core.steps import EditAction, StepRecord
from agent_core.trajectory import Trajectory, live_records, was_cut

FORMATS = ("replay", "sft-toolcall", "sft-text", "swebench")


class ExportError(Exception):
    """The export cannot be made; the message says why and what to pass instead."""


@dataclass
class Step:
    """One step of the effective history, as an export sees it."""

    record: StepRecord
    action: Action
    by_user: bool  # a command the user typed, not a model proposal
    edited: bool  # the user replaced the model's action
    before: str | None  # the checkpoint (commit or ref) the step started from


def effective_steps(trajectory: Trajectory) -> list[Step]:
    """Executed, not undone steps in order (see the module docstring)."""
    steps: list[Step] = []
    before: str | None = None
    for record in live_records(trajectory.events):
        if record.action is None or record.observation is None or record.checkpoint is None:
            continue
        if before is None:
            before = record.checkpoint.ref.rsplit("/", 1)[0] + "/0"
        steps.append(
            Step(
                record=record,
                action=record.action,
                by_user=record.extra.get("source") == "user",
                edited=isinstance(record.decision, EditAction),
                before=before,
            )
        )
        before = record.checkpoint.commit
    return steps


class _Renderer:
    """Writes actions in a target dialect, translating kinds it lacks."""

    def __init__(self, trajectory: Trajectory, dialect: str, repo: Path | None):
        self.dialect = dialect
        self.repo = repo
        self.alias = trajectory.config.get("path_alias", "/testbed")

    def turn(self, step: Step) -> str:
        """The model's text for `step` in the target dialect."""
        record = step.record
        if not step.edited and not step.by_user and record.proposed.dialect == self.dialect:
            return record.proposed.raw
        try:
            action = formats.translate(step.action, self.dialect, read_file=self._reader(step))
            return formats.render(action, self.dialect, record.proposed.thought)
        except ValueError as error:
            raise ExportError(
                f"step {step.record.index} ({step.action.kind}) has no {self.dialect} form: {error}"
            ) from None

    def _reader(self, step: Step) -> Callable[[str], str] | None:
        """Reads files as they were before `step`, from its previous checkpoint."""
        repo, before = self.repo, step.before
        if repo is None or before is None:
            return None
        alias = PurePosixPath(self.alias)

        def read_file(path: str) -> str:
            target = PurePosixPath(path)
            if target.is_relative_to(alias):
                target = target.relative_to(alias)
            elif target.is_absolute() and target.is_relative_to(repo.resolve().as_posix()):
                target = target.relative_to(repo.resolve().as_posix())
            return _git(repo, "show", f"{before}:{posixpath.normpath(target.as_posix())}")

        return read_file


def _git(repo: Path, *args: str) -> str:
    result = GitRunner(repo).run_full(*args, ok_codes=tuple(range(256)))
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise ExportError(f"git {' '.join(args)} failed in {repo}: {message}")
    return result.stdout.decode("utf-8", "surrogateescape")


def _observation(step: Step, dialect: str) -> str:
    record = step.record
    assert record.observation is not None
    if step.by_user:
        command = step.action.command if isinstance(step.action, Bash) else str(step.action)
        return prompts.format_user_command(dialect, command, record.observation)
    return prompts.format_observation(
        dialect, step.action, record.observation, notice=record.proposed.notice
    )


def live_messages(trajectory: Trajectory) -> list[tuple[int, str]]:
    """(step it follows, text) of each message the user wrote to the model and did not undo."""
    messages: list[tuple[int, str]] = []
    records = 0
    for event in trajectory.events:
        if isinstance(event, (StepExecuted, StepRejected)):
            records = event.record.index
        elif isinstance(event, UserMessage):
            messages.append((records, event.text))
        elif isinstance(event, StepUndone):
            records = min(records, event.to_index)
            messages = [m for m in messages if m[0] <= event.to_index]
    return messages


def training_turns(trajectory: Trajectory, dialect: str, repo: Path | None = None) -> list[
    prompts.Turn
]:
    """The effective history as prompt turns of `dialect`; the user's commands and messages are
    turns with an empty assistant text."""
    renderer = _Renderer(trajectory, dialect, repo)
    messages = live_messages(trajectory)
    turns = []

    def say(before: float) -> None:
        while messages and messages[0][0] < before:
            text = prompts.format_user_message(dialect, messages.pop(0)[1])
            turns.append(prompts.Turn(assistant="", observation=text))

    for step in effective_steps(trajectory):
        say(step.record.index)
        assistant = "" if step.by_user else renderer.turn(step)
        turns.append(prompts.Turn(assistant=assistant, observation=_observation(step, dialect)))
    say(float("inf"))
    return turns


def export_replay(trajectory: Trajectory, repo: Path | None = None) -> list[dict[str, Any]]:
    dialect = trajectory.dialect
    if dialect not in formats.DIALECTS:
        raise ExportError(
            f"session {trajectory.session_id} never proposed a step, so its dialect is unknown: "
            "there is nothing to replay"
        )
    renderer = _Renderer(trajectory, dialect, repo)
    return [{"output": renderer.turn(step)} for step in effective_steps(trajectory)]


def export_sft_toolcall(trajectory: Trajectory, repo: Path | None = None) -> list[dict[str, Any]]:
    turns = training_turns(trajectory, "toolcall", repo)
    return [
        {"messages": prompts.toolcall_messages(trajectory.issue, turns), "tools": prompts.TOOLS}
    ]


def export_sft_text(trajectory: Trajectory, repo: Path | None = None) -> list[dict[str, Any]]:
    turns = training_turns(trajectory, "text", repo)
    rows = []
    for i, turn in enumerate(turns):
        if not turn.assistant:
            continue
        said = prompts.LEADING_THOUGHT.sub("", turn.assistant, count=1).strip()
        rows.append(
            {"prompt": prompts.text_prompt(trajectory.issue, turns[:i]), "completion": f" {said}"}
        )
    return rows


def model_name(trajectory: Trajectory) -> str:
    """What produced the session, for SWE-bench's `model_name_or_path`."""
    info = trajectory.config.get("backend_info") or {}
    for key in ("adapter", "model", "preset", "backend"):
        if info.get(key):
            return str(info[key])
    return "navtui"


def final_patch(trajectory: Trajectory, repo: Path | None) -> str:
    """The finished session's patch, else (not finished, or its patch summarised or cut in the
    log) checkpoint 0 -> the last checkpoint (needs `repo`)."""
    finished = trajectory.finished
    whole = finished is not None and finished.patch_complete and not was_cut(finished.patch)
    if finished is not None and finished.reason != "error" and whole:
        return finished.patch
    steps = [s for s in effective_steps(trajectory) if s.record.checkpoint is not None]
    if not steps:
        return ""
    if repo is None:
        raise ExportError(
            f"session {trajectory.session_id} did not finish (or its patch was too large to "
            "log): pass --repo REPO so its last checkpoint can be diffed"
        )
    last = steps[-1].record.checkpoint
    assert last is not None
    base = last.ref.rsplit("/", 1)[0] + "/0"
    changed = _git(repo, "diff", "--name-only", "--no-renames", "-z", base, last.commit)
    scope = patch_scope(live_records(trajectory.events), [p for p in changed.split("\0") if p],
                        keep_pycache=bool(trajectory.config.get("keep_pycache")))
    return _git(repo, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "-M",
                base, last.commit, "--", *(f":(exclude,literal){p}" for p in scope.exclude))


def export_swebench(trajectory: Trajectory, repo: Path | None = None) -> list[dict[str, Any]]:
    return [
        {
            "instance_id": trajectory.meta.get("instance_id", trajectory.session_id),
            "model_name_or_path": model_name(trajectory),
            "model_patch": final_patch(trajectory, repo),
        }
    ]


EXPORTERS: dict[str, Callable[[Trajectory, Path | None], list[dict[str, Any]]]] = {
    "replay": export_replay,
    "sft-toolcall": export_sft_toolcall,
    "sft-text": export_sft_text,
    "swebench": export_swebench,
}


def export(trajectory: Trajectory, fmt: str, repo: Path | None = None) -> list[dict[str, Any]]:
    """Rows of `fmt` for one session; ExportError for an unknown format or an impossible step."""
    exporter = EXPORTERS.get(fmt)
    if exporter is None:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return exporter(trajectory, repo)


def to_jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)

