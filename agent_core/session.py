"""The one loop: prompt the model, parse its proposal, get a decision, execute, checkpoint, observe.

A `Session` owns the conversation and the step records; everything else is delegated:
`agent_core.prompts` shapes the prompt per dialect, `agent_core.context` fits it into the window,
the backend streams text, `agent_core.formats` parses it, the executor runs the action and the
workspace checkpoints the tree. Front ends drive it with `propose()` / `decide()` (or `run(policy)`)
from one worker thread and learn everything through the events they `subscribe` to.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterable

from agent_core import formats, prompt_log, prompts
from agent_core.git_notices import control_left_notices, outside_notice, repo_control_notice
from agent_core.actions import Action, Bash, Submit, action_from_dict, action_to_dict
from agent_core.backends.base import Backend, BackendError
from agent_core.backends.faults import ServerFault
from agent_core.context import ContextFitter, ContextOverflow
from agent_core.events import (
    Event, FormatError, Notice, SessionError, SessionFinished, SessionStarted, StepExecuted,
    StepProposed, StepRejected, StepUndone, TokenStreamed, TurnStarted, UsageReported, UserMessage,
)
from agent_core.executor import Executor
from agent_core.finish import FinishReason
from agent_core.formats import ParseError, translate
from agent_core.formats.common import join_notices
from agent_core.hunks import hunk_note
from agent_core.patch_scope import PatchScope, patch_scope
from agent_core.policy import AutoPolicy, Policy
from agent_core.prompt_types import Prompt, Usage
from agent_core.repetition import RepetitionGuard
from agent_core.session_config import AUTO_PROMPT_DIALECT, SessionConfig, new_session_id
from agent_core.session_state import SessionState
from agent_core.steps import (
    GIT_WARNINGS_KEY, Approve, Decision, EditAction, KeepHunks, Observation, Origin, ProposedStep,
    Quit, Reject, StepRecord, StepStatus,
)
from agent_core.stored_turns import store_turn
from agent_core.stuck import StuckDetector
from agent_core.turn_retry import deadline_timer, fit_server_window, generate_with_retries
from agent_core.workspace import UnsafeRestore, Workspace, WorkspaceError


class SessionStop(Exception):
    """Ends the session from deep inside a turn or a decision; caught at the `propose` /
    `decide` boundary, which finishes the session with `reason` and `message` (an `error` is
    also announced as a SessionError)."""

    def __init__(self, reason: FinishReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Session:
    """One issue worked on step by step; see the module docstring for who does what."""

    def __init__(
        self,
        *,
        workspace: Workspace,
        executor: Executor,
        backend: Backend,
        issue: str,
        config: SessionConfig,
        session_id: str | None = None,
    ) -> None:
        self.id = session_id or new_session_id()
        self.issue = issue
        self.config = dataclasses.replace(config, sandbox=executor.where)
        self.workspace = workspace
        self.executor = executor
        self.backend = backend
        self.state = SessionState(self.dialect)  # changed only by the events the session emits
        self._listeners: list[Callable[[Event], None]] = []
        self._trimmed = (0, 0)  # (capped, elided) turns in the last prompt
        self._fitter: tuple[str, ContextFitter] | None = None  # (dialect, fitter)
        self._started_at: float | None = None
        self._cancelled = threading.Event()
        self._stuck = StuckDetector()
        self._turn_notice: str | None = None  # about how the last reply was cut, for the model
        self._identity_logged: dict | None = None  # the backend identity last logged
        if hasattr(backend, "attach"):  # requests carry the session's id; waits become events
            backend.attach(self.id, self._emit)

    @property
    def records(self) -> list[StepRecord]:
        """The steps executed or rejected and still standing (undo drops later ones)."""
        return self.state.records

    @property
    def pending(self) -> StepProposed | None:
        """The proposal waiting for a decision."""
        return self.state.pending

    @property
    def finished(self) -> SessionFinished | None:
        return self.state.finished

    # --- events ---------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Call `listener` with every event, synchronously, from the session's thread."""
        self._listeners.append(listener)

    def _emit(self, event: Event) -> None:
        """Apply `event` to the session's state, then tell the listeners."""
        self.state.apply(event)
        for listener in list(self._listeners):
            listener(event)

    def _finish(self, reason: FinishReason, message: str) -> None:
        if self.finished is None:
            self._warn_control_left()
            patch, complete, left_out = self._scoped_patch()
            for notice in left_out:
                self._emit(Notice(notice))
            if not complete:
                self._emit(Notice(
                    "the session's patch is too large to log in full: huge and binary files are "
                    "named with their size and blob id; --patch-out writes all of it"
                ))
            self._emit(SessionFinished(reason, message, patch, complete))

    def _stop(self, stop: SessionStop) -> None:
        if stop.reason is FinishReason.ERROR:
            self._emit(SessionError(stop.message))
        self._finish(stop.reason, stop.message)

    def _patch(self) -> tuple[str, bool]:
        return self._scoped_patch()[:2]

    def _scoped_patch(self) -> tuple[str, bool, list[str]]:
        """(the patch within the diff caps, whether complete, what its scope left out)."""
        if self._started_at is None:
            return "", True, []
        try:
            scope = self.patch_scope()
            return (*self.workspace.bounded_patch(scope.exclude), scope.notices)
        except WorkspaceError as error:
            self._emit(SessionError(f"could not compute the session patch: {error}"))
            return "", True, []

    def patch_scope(self) -> PatchScope:
        """What the patch leaves out of the tree's changes (`agent_core.patch_scope`)."""
        changed = self.workspace.changed_files(self.workspace.checkpoints[0].index)
        return patch_scope(self.records, changed, keep_pycache=self.config.keep_pycache)

    def full_patch(self) -> str:
        """The whole patch (huge and binary files included), the same scope as the logged one."""
        return self.workspace.patch(self.patch_scope().exclude)

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def dialect(self) -> str:
        """The dialect prompts are built in (a default while `auto` awaits the first reply)."""
        return AUTO_PROMPT_DIALECT if self.config.dialect == "auto" else self.config.dialect

    @property
    def profile(self) -> prompts.Profile:
        """The prompt profile: the configured one, or the dialect's default."""
        return prompts.profile_for(self.dialect, self.config.prompt_profile)

    @property
    def started(self) -> bool:
        return self._started_at is not None

    def start(self) -> None:
        """Snapshot the user's tree as checkpoint 0 and announce the session."""
        self.workspace.begin(self.id)
        self._started_at = time.monotonic()
        self._emit(SessionStarted(self.id, self.issue, dataclasses.asdict(self.config)))
        for message in [*self.backend.notices, *fit_server_window(self.backend, self.config)]:
            self._emit(Notice(message))
        self._warn_outside()

    def run(self, policy: Policy) -> SessionFinished:
        """Propose and decide until the session finishes; returns how it finished."""
        if not self.started:
            self.start()
        while self.finished is None:
            proposal = self.propose()
            if proposal is not None:
                self.decide(policy.decide(proposal), waited=not isinstance(policy, AutoPolicy))
            elif self._cancelled.is_set():
                self._finish(FinishReason.QUIT, "generation cancelled by the user")
        return self.finished

    def cancel(self) -> None:
        """Stop the generation in progress (thread-safe)."""
        self._cancelled.set()
        self.backend.cancel()

    def close(self) -> None:
        """Stop the shell, free the model and give up the repository's session lock."""
        self.executor.close()
        self.backend.close()
        self.workspace.close()

    # --- the model's turn -------------------------------------------------------------------

    def _steps_taken(self) -> int:
        """Model proposals executed or rejected (commands the user ran do not count)."""
        return sum(1 for record in self.records if record.origin is Origin.MODEL)

    def _out_of_time(self) -> bool:
        limit, started = self.config.max_time, self._started_at
        return limit is not None and started is not None and time.monotonic() - started >= limit

    def _limit_reached(self) -> str | None:
        if self._steps_taken() >= self.config.max_steps:
            return f"stopped after {self.config.max_steps} steps (--max-steps)"
        if self._out_of_time():
            return f"stopped after {self.config.max_time:g} s (--max-time)"
        return None

    def propose(self) -> StepProposed | None:
        """Run one model turn. Returns the proposal, or None (format error, cancel, finished)."""
        if self.finished is not None:
            return None
        if self.pending is not None:
            return self.pending
        if not self.started:
            self.start()
        try:
            return self._turn()
        except SessionStop as stop:
            self._stop(stop)
            return None

    def _turn(self) -> StepProposed | None:
        limit = self._limit_reached()
        if limit:
            raise SessionStop(FinishReason.LIMIT, limit)
        index = self.state.next_index()
        self._emit(TurnStarted(index))
        try:
            fitted = self._context_fitter().fit(self.state.turns)
        except ContextOverflow as overflow:
            raise SessionStop(FinishReason.LIMIT, f"context window full: {overflow}") from None
        trimmed = (fitted.capped, fitted.elided)
        if any(trimmed) and trimmed != self._trimmed:
            self._emit(
                Notice(
                    f"context: {fitted.capped} long observation(s) cut to head and tail and "
                    f"{fitted.elided} old step(s) omitted to fit {self.config.context_window} tokens"
                )
            )
        self._trimmed = trimmed
        turn = generate_with_retries(self._generate, index, fitted, self._context_fitter(),
                                     self.state.turns, self.config.max_new_tokens,
                                     self._emit, self._cancelled.is_set)
        if turn.finish is not None:
            raise SessionStop(*turn.finish)
        raw, fitted = turn.raw, turn.fitted
        self._turn_notice = turn.told or self._turn_notice
        if raw is None:
            return None
        usage = self.backend.last_usage or Usage()
        self._emit(
            UsageReported(
                index, usage, fitted.tokens, self.config.context_window,
                context_estimated=not self.backend.exact_counts,
            )
        )
        sent = prompt_log.prompt_sent(  # what the model just read
            self.backend, index, fitted, len(self.state.entries), usage, dialect=self.dialect,
            profile=self.profile, profile_name=self.config.prompt_profile or self.profile.name,
            path_alias=self.config.path_alias, logged=self._identity_logged,
        )
        self._identity_logged = sent.identity or self._identity_logged
        self._emit(sent)
        if self._turn_notice is None and usage.new_tokens >= self.config.max_new_tokens:
            self._cut(
                f"reply {index} cut at {self.config.max_new_tokens} tokens (--max-new-tokens)",
                f"Your reply was cut off after {self.config.max_new_tokens} tokens. Keep replies "
                "short: brief reasoning, then exactly one action.",
            )
        return self._parse(index, raw)

    def _cut(self, shown: str, told: str) -> None:
        """A reply was cut short: tell the user now and the model with the next observation."""
        self._emit(Notice(shown))
        self._turn_notice = told

    def _context_fitter(self) -> ContextFitter:
        """The session's fitter (a new one when the dialect changed)."""
        if self._fitter is None or self._fitter[0] != self.dialect:
            fitter = ContextFitter(
                self._build_prompt,
                self.backend.count_tokens,
                self.config.context_window - self.config.max_new_tokens,
                count_added=self.backend.count_added_tokens,
            )
            self._fitter = (self.dialect, fitter)
        return self._fitter[1]

    def _build_prompt(self, turns: list[prompts.Turn]) -> Prompt:
        return prompts.build_prompt(
            self.dialect,
            self.issue,
            turns,
            max_new_tokens=self.config.max_new_tokens,
            repo_path=self.config.path_alias,
            profile=self.profile,
        )

    def _generate(self, index: int, prompt: Prompt) -> str | None:
        """Stream one turn; None when it was cancelled (SessionStop when the session must end)."""
        self._cancelled.clear()
        self._turn_notice = None
        chunks: list[str] = []
        guard = RepetitionGuard()
        deadline = deadline_timer(self.config.max_time, self._started_at, self.backend.cancel)
        try:
            for chunk in self.backend.stream(prompt):
                if self._cancelled.is_set():
                    break
                chunks.append(chunk)
                self._emit(TokenStreamed(index, chunk))
                loop = guard.feed(chunk)
                if loop is not None:
                    self.backend.cancel()
                    shown = " ".join(loop.split())[:60]
                    self._cut(
                        f"reply {index} stopped early: it kept repeating {shown!r}",
                        f"Your reply was stopped because it kept repeating {shown!r}. Do not "
                        "repeat text: give brief reasoning, then exactly one action.",
                    )
                    break
        except ServerFault:
            raise  # generate_with_retries retries or stops with a named reason
        except BackendError as error:  # the reason says how: an error, a script used up, ...
            raise SessionStop(error.reason, str(error)) from None
        finally:
            deadline.cancel()
        if self._out_of_time():  # the deadline timer stopped the reply (keep-alives count not)
            raise SessionStop(FinishReason.LIMIT, self._limit_reached() or "out of time")
        if self._cancelled.is_set():
            self._emit(Notice("generation cancelled"))
            return None
        return "".join(chunks)

    def _parse(self, index: int, raw: str) -> StepProposed | None:
        try:
            step = formats.parse(raw, self.config.dialect)
        except ParseError as error:
            self._format_error(index, raw, error)
            return None
        step.notice = join_notices(step.notice, self._turn_notice)
        if self.config.dialect == "auto":
            self.config.dialect = step.dialect
            self._emit(Notice(f"dialect detected from the model's first reply: {step.dialect}"))
        prepared = self.executor.prepare(step.action)
        self._emit(StepProposed(index, step, prepared.command_shown, prepared.preview_diff))
        return self.pending

    def _format_error(self, index: int, raw: str, error: ParseError) -> None:
        """The reply becomes a turn whose observation is the parse error; stop after N in a row."""
        stuck = self._stuck.format_error(raw)
        shown, told = prompts.parse_error_turn(self.dialect, error, self.profile, self.config.path_alias)
        nudge = prompts.first_reply_nudge(raw, not self.records and not self.state.format_errors)
        observation = prompts.with_notice(told, join_notices(self._turn_notice, nudge, stuck))
        self._emit(FormatError(index, raw, shown, self.state.format_errors + 1, observation))
        stop = self._stuck_stop(stuck)
        if stop is not None:
            raise stop
        if self.state.format_errors >= self.config.max_format_errors:
            raise SessionStop(
                FinishReason.FORMAT_ERRORS,
                f"stopped after {self.state.format_errors} replies in a row that held no action "
                f"navtui could read ({formats.dialect_words(self.config.dialect)}; last problem: "
                f"{error.problem})",
            )

    # --- decisions --------------------------------------------------------------------------

    def parse_edit(self, text: str) -> Action:
        """The user's replacement action: a JSON action object, or text in any dialect."""
        stripped = text.strip()
        if stripped.startswith("{") and '"kind"' in stripped:
            try:
                return action_from_dict(json.loads(stripped))
            except (ValueError, TypeError) as error:
                raise ParseError(str(error), "json", '{"kind": "bash", "command": "ls"}') from None
        try:
            return formats.parse(text, self.dialect).action
        except ParseError:
            return formats.parse(text, "auto").action

    def decide(self, decision: Decision, *, waited: bool = True) -> StepRecord | None:
        """Apply a decision to the pending proposal; returns its record (None for Quit).

        Quit needs no pending proposal: it also ends a session between turns (e.g. on Ctrl-C).
        `waited`: the decision came from a person, so the tree may have changed meanwhile; such
        changes are checkpointed as the user's own before the step runs (`_keep_user_edits`).
        """
        if isinstance(decision, Quit):
            self._finish(FinishReason.QUIT, "quit by the user")
            return None
        proposal = self.pending
        if proposal is None:
            raise RuntimeError("no proposal is waiting for a decision; call propose() first")
        if isinstance(decision, Reject):
            return self._reject(proposal, decision)
        try:
            if waited:
                proposal = self._keep_user_edits(proposal)
            action = proposal.step.action
            if isinstance(decision, EditAction):
                action = self.executor.prepare(decision.action).action
            return self._execute(proposal, decision, action)
        except SessionStop as stop:
            self._stop(stop)
            return None

    def _reject(self, proposal: StepProposed, decision: Reject) -> StepRecord:
        record = StepRecord(index=proposal.index, proposed=proposal.step, decision=decision)
        stuck = self._stuck.rejected(proposal.step.action, decision.feedback)
        observation = prompts.with_notice(
            prompts.format_rejection(self.dialect, decision.feedback, self.profile),
            join_notices(proposal.step.notice, stuck),
        )
        store_turn(record, prompts.Turn(proposal.step.raw, observation))
        self._emit(StepRejected(record))
        self._stop_if_stuck(stuck)
        return record

    def _stop_if_stuck(self, stuck: str | None) -> None:
        stop = self._stuck_stop(stuck)
        if stop is not None:
            self._stop(stop)

    def _stuck_stop(self, stuck: str | None) -> SessionStop | None:
        """Tell the user about a stuck turn; the stop once `max_stuck` of them were seen."""
        if stuck is None:
            return None
        self._emit(Notice(f"stuck: {stuck}"))
        limit = self.config.max_stuck
        if limit is None or self._stuck.count < limit:
            return None
        return SessionStop(
            FinishReason.STUCK,
            f"stopped after {self._stuck.count} turns in which the model repeated itself "
            f"(--max-stuck {limit}); last: {stuck}",
        )

    def _edited_turn(self, proposal: StepProposed, action: Action) -> tuple[str, str]:
        """(assistant text, note) for an edited step: the model's turn shows the user's action."""
        try:
            shown = translate(action, self.dialect)
            return formats.render(shown, self.dialect, proposal.step.thought), (
                "(The user replaced your proposed action with the one above.)"
            )
        except ValueError:
            described = json.dumps(action_to_dict(action))
            return proposal.step.raw, f"(The user replaced your proposed action with: {described})"

    def _keep_user_edits(self, proposal: StepProposed) -> StepProposed:
        """Changes made since the last checkpoint (the user's edits while the proposal waited)
        become a checkpoint of their own, recorded as the user's, so the approved step's diff
        and its undo cover only what the step did; the step then runs under the next index.
        Returns the proposal to run."""
        try:
            changed = self.workspace.foreign_changes()
            if not changed:
                return proposal
            checkpoint = self.workspace.checkpoint(proposal.index, trusted=True)
            diff = self.workspace.step_diff(proposal.index)
        except WorkspaceError as error:
            raise SessionStop(
                FinishReason.ERROR, f"could not checkpoint your edits before step {proposal.index}: {error}"
            ) from None
        record = StepRecord(
            index=proposal.index,
            proposed=ProposedStep(thought="", action=Bash(""), raw="", dialect=self.dialect),
            decision=Approve(),
            checkpoint=checkpoint,
            diff=diff,
            origin=Origin.USER,
            user_edits=changed,
        )
        what = ", ".join(changed[:10]) + (f" and {len(changed) - 10} more" if len(changed) > 10 else "")
        self._emit(Notice(
            f"your edits ({what}) are kept as checkpoint {record.index}; "
            f"the approved step runs as step {record.index + 1}"
        ))
        self._emit(StepExecuted(record))
        return dataclasses.replace(proposal, index=proposal.index + 1)

    def keep_user_edits(self) -> None:
        """Checkpoint the user's changes now, as a step of the user's own (e.g. hunks of a step
        put back: `agent_core.step_hunks`); a proposal waiting moves to the next step number."""
        waiting = self.pending
        blank = ProposedStep(thought="", action=Bash(""), raw="", dialect=self.dialect)
        try:
            moved = self._keep_user_edits(waiting or StepProposed(self.state.next_index(), blank, ""))
        except SessionStop as stop:
            return self._stop(stop)
        if waiting is not None and moved is not waiting:
            self._emit(moved)

    def _execute(self, proposal: StepProposed, decision: Decision, action: Action) -> StepRecord:
        assistant, note, after = proposal.step.raw, "", ""
        if isinstance(decision, KeepHunks):  # the model's own turn; the review said after it
            after = "\n" + hunk_note(getattr(action, "path", ""), decision.hunks)
        elif isinstance(decision, EditAction):
            assistant, note = self._edited_turn(proposal, action)
        review = self._review(action)
        if review is not None:
            observation = Observation(output=review, exit_code=0)
        else:
            observation = self.executor.execute(action)
        try:
            checkpoint = self.workspace.checkpoint(proposal.index)
            diff = self.workspace.step_diff(proposal.index)
        except WorkspaceError as error:
            raise SessionStop(FinishReason.ERROR, f"could not checkpoint step {proposal.index}: {error}") from None
        warnings = self._warn_repo_control(proposal.index)
        record = StepRecord(
            index=proposal.index,
            proposed=proposal.step,
            decision=decision,
            action=action,
            observation=observation,
            checkpoint=checkpoint,
            diff=diff,
        )
        if warnings:
            record.extra[GIT_WARNINGS_KEY] = warnings
        if review is not None:
            record.review_stage = self._submits_reviewed()
        stuck = None if isinstance(action, Submit) else self._stuck.executed(action, observation)
        text = prompts.format_observation(
            self.dialect,
            action,
            observation,
            notice=join_notices(proposal.step.notice, stuck),
            profile=self.profile,
            to_model=self.executor.path_map.to_model,
        )
        text = f"{note}\n{text}" if note else text + after
        store_turn(record, prompts.Turn(assistant, text))
        self._emit(StepExecuted(record))
        if isinstance(action, Submit) and review is None:
            self._finish(FinishReason.SUBMITTED, "the model submitted its fix")
        self._stop_if_stuck(stuck)
        return record

    def _warn_outside(self) -> None:
        notice = outside_notice(self.workspace)
        if notice:
            self._emit(Notice(notice))

    def _warn_repo_control(self, index: int) -> list[str]:
        """Say what step `index` did to git's own files; the lines said (for the step's card).
        A `.git` it made is covered by the sandbox from the next command on."""
        self.executor.cover_git_entries(self.workspace.made_git.fresh)
        self._warn_outside()
        notice, lines = repo_control_notice(self.workspace, index)
        if notice:
            self._emit(Notice(notice))
        return lines

    def _warn_control_left(self) -> None:
        """At the end: say which of git's own files the session leaves changed (git_notices)."""
        if self._started_at is not None:
            for notice in control_left_notices(self.workspace):
                self._emit(Notice(notice))

    def _submits_reviewed(self) -> int:
        return sum(1 for record in self.records if record.status is StepStatus.REVIEWED)

    def _review(self, action: Action) -> str | None:
        """The review message a submit gets instead of ending the session (SWE-smith's review on
        submit: the first submit shows the session's diff), or None when the submit ends it."""
        if not isinstance(action, Submit) or not self.config.submit_review:
            return None
        messages = self.profile.submit_review_messages
        stage = self._submits_reviewed()
        if stage >= len(messages):
            return None
        return prompts.submit_review_text(messages[stage], self._patch()[0], self.issue)

    # --- the user's own input ------------------------------------------------------------

    def run_user_command(self, command: str) -> StepRecord:
        """Run a command the user typed; it is checkpointed and the model sees it next turn.

        A proposal waiting meanwhile stays pending: the command takes its step number and the
        proposal, announced again (StepProposed), moves to the next one.
        """
        if not self.started:
            self.start()
        waiting = self.pending
        index = waiting.index if waiting is not None else self.state.next_index()
        observation = self.executor.run_user_command(command)
        action = Bash(command)
        checkpoint = self.workspace.checkpoint(index)
        self._warn_repo_control(index)
        record = StepRecord(
            index=index,
            proposed=ProposedStep(thought="", action=action, raw="", dialect=self.dialect),
            decision=Approve(),
            action=action,
            observation=observation,
            checkpoint=checkpoint,
            diff=self.workspace.step_diff(index),
            origin=Origin.USER,
        )
        note = prompts.format_user_command(
            self.dialect, command, observation, self.profile, self.executor.path_map.to_model
        )
        store_turn(record, prompts.Turn("", note))
        self._emit(StepExecuted(record))
        if waiting is not None:
            self._emit(dataclasses.replace(waiting, index=index + 1))
        return record

    def continue_with(self, text: str) -> None:
        """Go on after the session finished (a submit, a limit): `text` is the next turn (the
        message reopens the session, see `SessionState.apply`)."""
        self.add_user_message(text)

    def add_user_message(self, text: str) -> None:
        """A message from the user; the model reads it with its next prompt."""
        note = prompts.format_user_message(self.dialect, text, self.profile)
        self._emit(UserMessage(text, note))

    # --- resume ---------------------------------------------------------------------------

    def restore_state(
        self, state: SessionState, *, notices: Iterable[str] = (),
        finished: SessionFinished | None = None,
    ) -> None:
        """Carry on a logged session from `state` (the fold of its log, see `agent_core.resume`)
        instead of calling `start()`.

        The workspace must already be attached to this session's checkpoints. Announces the
        session again (SessionStarted), then each of `notices`, then `finished` (a submitted
        session, to go on with `continue_with`) again.
        """
        self.state = dataclasses.replace(state, records=list(state.records),
                                         entries=list(state.entries))
        self._started_at = time.monotonic()
        self._emit(SessionStarted(self.id, self.issue, dataclasses.asdict(self.config)))
        for message in notices:
            self._emit(Notice(message))
        if finished is not None:
            self._emit(finished)

    # --- undo -----------------------------------------------------------------------------

    def undo(self, to_index: int | None = None, *, force: bool = False) -> StepUndone:
        """Go back to the state after step `to_index` (None: before the last executed step).

        Files return to that step's checkpoint, and the conversation forgets every later turn.
        Raises `UnsafeRestore` (listing them) when files changed since the last checkpoint that
        the session did not change, unless `force`; either way the state before the undo is
        kept under a `before-undo` ref (`StepUndone.saved_ref`).
        """
        executed = [r for r in self.records if r.checkpoint is not None]
        if to_index is None:
            if not executed:
                raise ValueError("nothing to undo: no step has been executed yet")
            to_index = executed[-1].index - 1
        if to_index < 0:
            raise ValueError(f"cannot undo to step {to_index}: checkpoint 0 is the first")
        kept = [r for r in executed if r.index <= to_index]
        foreign = self.workspace.foreign_changes()
        if foreign and not force:
            raise UnsafeRestore(foreign, self.workspace.checkpoints[-1].index)
        saved = self.workspace.save_state("before-undo")
        report = self.workspace.restore(kept[-1].index if kept else 0)
        self.executor.cover_git_entries(self.workspace.made_git.fresh)
        self._stuck.reset()
        event = StepUndone(to_index, list(report.changed_paths), saved)
        self._emit(event)
        if report.restored_refs:
            self._emit(Notice(
                "undo put back branches and tags deleted during the session, at their tips "
                f"when it started: {', '.join(report.restored_refs)}"
            ))
        self._warn_outside()
        return event
