"""Turn a session log into other tools' formats: replay script, SFT data, SWE-bench predictions.

Every export works on the session's *effective history*: the steps that ran and were not undone,
in order, each with the action that really ran. So:

* a step the user edited contributes the user's action (rendered in the target dialect, with the
  model's thought), never the model's original;
* rejected proposals are not replayed and not trained on, but the SFT formats keep them in the
  context as the model read them (its proposal, then the rejection with the user's feedback),
  since every later turn answered them: `sft-text` makes no row of a rejected turn, and
  `sft-toolcall` gives its assistant message `"weight": 0` (the convention of trainers that
  honour per-message weights; trl's chat format ignores the key). Turns that could not be
  parsed are dropped;
* undone steps are dropped, as is anything after them that was undone with them;
* commands the user ran themselves stay as what they were for the model: a note with the
  command's output (in `replay` they become bash turns, so a re-run runs them too);
* messages the user wrote to the model stay as user notes in the SFT formats (a replay script
  holds model turns only, so `replay` leaves them out).

Formats (one JSON object per line):

* `replay`   — `{"output": <raw model text>}` per model turn, for `--backend replay --script`;
  re-running it with `--auto` on the same base state reproduces the session's final diff.
* `sft-toolcall` — one line per session: `{"messages": [...], "tools": [...]}` exactly as the
  toolcall dialect prompts its model, with the session's prompt profile when the session ran
  in the toolcall dialect (the dialect's default otherwise) (system, issue, assistant `<tool_call>` turns, `tool`
  observations), ready for `apply_chat_template(messages, tools=tools)`.
* `sft-text` — one line per model turn: `{"prompt": ..., "completion": ...}` where `prompt` is
  the text dialect's whole prompt up to that turn (ending in `## Your turn:\\nThought:`) and
  `completion` is what the model wrote after it; `prompt + completion` is a prefix of the next
  line's prompt.
* `swebench` — one line: `{"instance_id", "model_name_or_path", "model_patch"}`.
* `sft`, `dpo`, `kto` — training rows in the session's own dialect whose prompts are the exact
  text the model read, built from every logged turn and the user's decision on it
  (`agent_core.learn.rows`); chat prompts are rendered with the session's tokenizer (`tokenizer`).

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
from agent_core.finish import FinishReason
from agent_core.git import GitRunner
from agent_core.history import standing_messages, standing_records
from agent_core.patch_scope import patch_scope
from agent_core.profiles import logged_profile
from agent_core.redaction import was_cut
from agent_core.steps import EditAction, Observation, Origin, Reject, StepRecord
from agent_core.trajectory import Trajectory
from agent_core.translated_output import TreeUnavailable, translated_output

FORMATS = ("replay", "sft-toolcall", "sft-text", "swebench", "sft", "dpo", "kto")


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
    rejected: bool = False  # a rejected proposal (only with `effective_steps(rejected=True)`)


def effective_steps(trajectory: Trajectory, *, rejected: bool = False) -> list[Step]:
    """Executed, not undone steps in order (see the module docstring); with `rejected`, the
    rejected proposals still standing too."""
    steps: list[Step] = []
    before: str | None = None
    for record in standing_records(trajectory.events):
        if rejected and isinstance(record.decision, Reject):
            steps.append(Step(record, record.proposed.action, False, False, before, True))
            continue
        if record.action is None or record.observation is None or record.checkpoint is None:
            continue
        if before is None:
            before = record.checkpoint.ref.rsplit("/", 1)[0] + "/0"
        steps.append(
            Step(
                record=record,
                action=record.action,
                by_user=record.origin is Origin.USER,
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
        return formats.render(self.action(step), self.dialect, record.proposed.thought)

    def action(self, step: Step) -> Action:
        """`step`'s action as the target dialect expresses it."""
        try:
            return formats.translate(step.action, self.dialect, read_file=self._reader(step))
        except ValueError as error:
            raise ExportError(
                f"step {step.record.index} ({step.action.kind}) has no {self.dialect} form: {error}"
            ) from None

    def observation(self, step: Step, shown: Action) -> Observation:
        """The step's observation, or, for an action translated into another kind of tool, the
        output that tool gives on the tree as it was before the step (`translated_output`)."""
        assert step.record.observation is not None
        if shown == step.action:
            return step.record.observation
        if self.repo is None or step.before is None:
            raise ExportError(
                f"step {step.record.index} ({step.action.kind}) is shown as a "
                f"{shown.kind} here, whose output needs the repository: pass --repo REPO"
            )
        try:
            return translated_output(self.repo, step.before, shown, path_alias=self.alias)
        except TreeUnavailable as error:
            raise ExportError(str(error)) from None

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
    result = GitRunner(repo).attempt(*args)
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise ExportError(f"git {' '.join(args)} failed in {repo}: {message}")
    return result.stdout.decode("utf-8", "surrogateescape")


def _observation(step: Step, renderer: _Renderer, profile: str | None = None) -> str:
    record, dialect = step.record, renderer.dialect
    if step.rejected:
        feedback = record.decision.feedback if isinstance(record.decision, Reject) else ""
        return prompts.format_rejection(dialect, feedback, profile)
    assert record.observation is not None
    if step.by_user:
        command = step.action.command if isinstance(step.action, Bash) else str(step.action)
        return prompts.format_user_command(dialect, command, record.observation, profile)
    shown = renderer.action(step)
    return prompts.format_observation(
        dialect, shown, renderer.observation(step, shown), notice=record.proposed.notice,
        profile=profile,
    )


def session_profile(trajectory: Trajectory, dialect: str) -> str | None:
    """The session's prompt profile when exporting to its own dialect (else the default); a
    packaged one only: a profile file the log names is never loaded (`logged_profile`)."""
    if trajectory.dialect != dialect:
        return None
    return logged_profile(trajectory.config.get("prompt_profile"))


def training_history(
    trajectory: Trajectory, dialect: str, repo: Path | None = None
) -> tuple[list[prompts.Turn], set[int]]:
    """The effective history as prompt turns of `dialect`, rejected proposals included, and
    the positions of those rejected turns (not to be trained on). The user's commands and
    messages are turns with an empty assistant text."""
    renderer = _Renderer(trajectory, dialect, repo)
    profile = session_profile(trajectory, dialect)
    messages = standing_messages(trajectory.events)
    turns: list[prompts.Turn] = []
    rejected: set[int] = set()

    def say(before: float) -> None:
        while messages and messages[0][0] < before:
            text = prompts.format_user_message(dialect, messages.pop(0)[1], profile)
            turns.append(prompts.Turn(assistant="", observation=text))

    for step in effective_steps(trajectory, rejected=True):
        say(step.record.index)
        if step.rejected:
            rejected.add(len(turns))
        assistant = "" if step.by_user else renderer.turn(step)
        observation = _observation(step, renderer, profile)
        turns.append(prompts.Turn(assistant=assistant, observation=observation))
    say(float("inf"))
    return turns, rejected



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
    turns, rejected = training_history(trajectory, "toolcall", repo)
    profile = prompts.profile_for("toolcall", session_profile(trajectory, "toolcall"))
    messages = prompts.toolcall_messages(trajectory.issue, turns, profile)
    replies = iter([i for i, turn in enumerate(turns) if turn.assistant.strip()])
    for message in messages:
        if message["role"] == "assistant" and next(replies) in rejected:
            message["weight"] = 0
    return [{"messages": messages, "tools": profile.tools}]


def export_sft_text(trajectory: Trajectory, repo: Path | None = None) -> list[dict[str, Any]]:
    turns, rejected = training_history(trajectory, "text", repo)
    profile = session_profile(trajectory, "text")
    rows = []
    for i, turn in enumerate(turns):
        if not turn.assistant or i in rejected:
            continue
        said = prompts.LEADING_THOUGHT.sub("", turn.assistant, count=1).strip()
        rows.append({"prompt": prompts.text_prompt(trajectory.issue, turns[:i], profile),
                     "completion": f" {said}"})
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
    if finished is not None and finished.reason != FinishReason.ERROR and whole:
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
    scope = patch_scope(standing_records(trajectory.events), [p for p in changed.split("\0") if p],
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


TRAINING_FORMATS = ("sft", "dpo", "kto")


def export(
    trajectory: Trajectory, fmt: str, repo: Path | None = None, *, tokenizer: str | None = None,
    skipped: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Rows of `fmt` for one session; ExportError for an unknown format or an impossible step.

    `tokenizer` renders the chat prompts of the training formats (default: the session's own);
    the turns those formats leave out, and why, are added to `skipped`."""
    if fmt in TRAINING_FORMATS:
        from agent_core.learn.logged import session_rows
        from agent_core.learn.rows import RowError

        try:
            rows = session_rows(trajectory, fmt, tokenizer)
        except RowError as error:
            raise ExportError(str(error)) from None
        if skipped is not None:
            skipped.extend(rows.skipped)
        return rows.data
    exporter = EXPORTERS.get(fmt)
    if exporter is None:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return exporter(trajectory, repo)


def to_jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)

