"""The main screen's dialogs about a step: always allow, reject, edit, undo, rewind, message,
the step's detail. A mixin of `MainScreen`: each opens its dialog, then tells the driver."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from typing import cast

from textual import work

from agent_core.actions import Bash, StrReplaceEditor
from agent_core.driver import Allow, Undo, UndoRefused, UserCommand, UserMessage
from agent_core.steps import Approve, EditAction, Reject, StepStatus
from app.config import save_allow_rule
from app.screens.allow import AllowPrefixScreen
from app.screens.confirm import ConfirmScreen, OverwriteScreen
from app.screens.edit import EditScreen, edit_text
from app.screens.hunk_review import HunkReviewKeys
from app.screens.message import MessageScreen
from app.screens.reject import RejectScreen
from app.screens.step_detail import StepDetailScreen
from widgets.action_card import ActionCard, user_edits_summary
from widgets.step_timeline import StepTimeline
from widgets.thought_stream import ThoughtStream

if TYPE_CHECKING:
    from app.screens.main import MainScreen


class StepDialogs:
    """The dialogs that decide on, undo or explain a step (all in the "modal" worker group)."""

    @work(exclusive=True, group="modal")
    async def action_always_allow(self) -> None:
        proposal = self.pending
        if proposal is None or self.driver is None:
            return
        action = proposal.step.action
        if isinstance(action, Bash):
            choice = await self.app.push_screen_wait(AllowPrefixScreen(proposal.command_shown))
            if choice is None:
                return
            self.driver.send(Allow(prefix=choice.prefix))
            rule = f"bash commands starting with “{choice.prefix}”"
            if choice.everywhere:
                rule += f" in every repository ({save_allow_rule(choice.prefix)})"
        else:
            kind = "view" if isinstance(action, StrReplaceEditor) and action.command == "view" else action.kind
            decision = cast(HunkReviewKeys, self).reviewed_decision()  # (the kept hunks, if reviewed)
            if decision is None:
                return
            self._decide(decision)  # before the rule, which would approve the whole proposal
            self.driver.send(Allow(kind=kind))
            rule = f"every {kind} action"
        self.notify(f"Always allowed: {rule}", timeout=3)
        if self.pending is proposal:
            self._decide(Approve())

    @work(exclusive=True, group="modal")
    async def action_reject(self) -> None:
        proposal = self.pending
        if proposal is None:
            return
        feedback = await self.app.push_screen_wait(RejectScreen(self._summary(proposal.step.action)))
        if feedback is not None and self.pending is proposal:
            self._decide(Reject(feedback))

    @work(exclusive=True, group="modal")
    async def action_edit(self) -> None:
        proposal, session = self.pending, self.session
        if proposal is None or session is None:
            return
        text = edit_text(proposal.step.action, session.config.dialect)
        action = await self.app.push_screen_wait(
            EditScreen(text, session.parse_edit, session.config.dialect)
        )
        if action is not None and self.pending is proposal:
            self._decide(EditAction(action))

    @work(exclusive=True, group="modal")
    async def action_undo(self) -> None:
        if self.driver is None:
            return
        executed = self._executed_records()
        last = executed[-1] if executed else None
        if last is not None and last.status is StepStatus.USER_EDITS and not await self.app.push_screen_wait(
            ConfirmScreen(
                "Undo your own edits?",
                f"Step {last.index} holds the edits you made while a proposal waited "
                f"({user_edits_summary(last, width=200)}). Undo puts those files back as they "
                "were before them; your versions are kept in a before-undo ref.",
                confirm="Undo them",
            )
        ):
            return
        self.pending = None
        self.driver.send(Undo(None))

    @work(exclusive=True, group="modal")
    async def _confirm_undo(self, refused: UndoRefused) -> None:
        """Show the files an undo would overwrite; undo anyway only if the user says so."""
        screen = OverwriteScreen("Undo", refused.error.paths, since=refused.error.checkpoint)
        if await self.app.push_screen_wait(screen) and self.driver is not None:
            self.driver.send(Undo(refused.to_index, force=True))

    def _rewind_target(self) -> int | None:
        """The executed step highlighted in the (visible) timeline, if any."""
        screen = cast("MainScreen", self)
        timeline = screen.query_one(StepTimeline)
        step = timeline.highlighted_step if timeline.display else None
        if step is None or not any(r.index == step for r in screen._executed_records()):
            return None
        return step

    @work(exclusive=True, group="modal")
    async def action_rewind(self) -> None:
        step = self._rewind_target()
        if self.driver is None or step is None:
            return
        later = [r.index for r in self._executed_records() if r.index > step]
        if later and not await self.app.push_screen_wait(ConfirmScreen(
            f"Rewind to step {step}?",
            f"Steps {later[0]}–{later[-1]} are undone: their file changes are reverted and the "
            "model forgets them." if len(later) > 1 else
            f"Step {later[0]} is undone: its file changes are reverted and the model forgets it.",
            confirm="Rewind",
        )):
            return
        self.pending = None
        self.driver.send(Undo(step))

    @work(exclusive=True, group="modal")
    async def action_message(self) -> None:
        if self.driver is None:
            return
        answer = await self.app.push_screen_wait(MessageScreen())
        if answer is None:
            return
        thoughts = self.query_one(ThoughtStream)
        if answer.kind == "command":  # runs beside a pending proposal, which stays pending
            await thoughts.note(f"$ {answer.text}", "user")
            self.running = True
            self.query_one(ActionCard).show_status("running", f"Your command runs: {answer.text}  (esc stops it)")
            self.driver.send(UserCommand(answer.text))
        else:
            await thoughts.note(f"You: {answer.text}", "user")
            self.paused = False
            self.driver.send(UserMessage(answer.text))

    def on_step_timeline_step_chosen(self, message: StepTimeline.StepChosen) -> None:
        self._show_step(message.index)

    @work(exclusive=True, group="modal")
    async def _show_step(self, index: int) -> None:
        if self.session is None:
            return
        record = next((r for r in self.session.records if r.index == index), None)
        if record is None:
            return
        can_rewind = self.finished is None and record.checkpoint is not None
        choice = await self.app.push_screen_wait(StepDetailScreen(self._user_record(record), can_rewind))
        if choice == "rewind" and self.driver is not None:
            self.pending = None
            self.driver.send(Undo(index))
