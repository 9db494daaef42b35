"""Per-hunk review on the main screen: the card lists an edit proposal's hunks (`HunkList`),
the keys below keep, drop or edit the current one and move between them, and approve runs
exactly the kept hunks (`agent_core.hunks`); `H` lists the last step's hunks and puts back the
ones dropped (`agent_core.step_hunks`). A mixin of `MainScreen`; its keys are in the screen's
BINDINGS (the one list the footer, help, palette and keymap check read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import work
from textual.binding import Binding

from agent_core.events import StepProposed
from agent_core.hunks import DROP, KEEP, HunkChoice, HunkReview, NothingKept, review_of
from agent_core.step_hunks import RevertError, StepHunk, revert_in_session, step_hunks
from agent_core.steps import Approve, Decision
from app.screens.hunk_edit import HunkEditScreen
from app.screens.step_hunks import StepHunksScreen
from widgets.action_card import ActionCard
from widgets.hunk_list import HunkList

if TYPE_CHECKING:
    from app.screens.main import MainScreen

HUNK_BINDINGS = [
    Binding("right_square_bracket", "hunk_next", "Hunk", id="navtui.hunk_next",
            tooltip="Next hunk of the proposed edit"),
    Binding("left_square_bracket", "hunk_prev", "Prev hunk", id="navtui.hunk_prev", show=False,
            tooltip="Previous hunk of the proposed edit"),
    # (hunks start kept: `k` takes a drop or an edit back; at 80 columns the footer has no room)
    Binding("k", "hunk_keep", "Keep", id="navtui.hunk_keep", show=False,
            tooltip="Keep this hunk (as proposed)"),
    Binding("x", "hunk_drop", "Drop", id="navtui.hunk_drop",
            tooltip="Drop this hunk: approve runs the others only"),
    Binding("E", "hunk_edit", "Edit hunk", id="navtui.hunk_edit", show=False,
            tooltip="Change the lines this hunk puts in"),
    Binding("H", "step_hunks", "Step hunks", id="navtui.step_hunks", show=False,
            tooltip="The last step's changes hunk by hunk: put back the ones you drop"),
]
HUNK_ACTIONS = frozenset(binding.action for binding in HUNK_BINDINGS)


class HunkReviewKeys:
    """The hunk keys and the decisions they lead to."""

    hunk_review: HunkReview | None = None  # the pending proposal's hunks, once the session said
    _read_step_hunks: tuple[str | None, list[StepHunk]] = (None, [])  # (a step's diff, its hunks)

    @property
    def _main(self) -> MainScreen:
        """This mixin as the main screen it is part of."""
        return cast("MainScreen", self)

    @property
    def hunk_list(self) -> HunkList:
        return self._main.query_one(HunkList)

    def watch_pending(self, proposal: StepProposed | None) -> None:
        """A new proposal: ask the session for its hunks (an edit of more than one is reviewed
        hunk by hunk); no proposal: no review."""
        self.hunk_review = None
        screen = self._main
        if proposal is not None and not screen.auto and screen.driver is not None:
            self._load_hunks(proposal)

    @work(group="hunks", exclusive=True, exit_on_error=False)
    async def _load_hunks(self, proposal: StepProposed) -> None:
        screen, action = self._main, proposal.step.action
        review = await screen.run_on_session(lambda session: review_of(session.executor.files, action))
        if not isinstance(review, HunkReview) or len(review.hunks) < 2:
            return
        if screen.pending is not proposal or screen.running:
            return
        self.hunk_review = review
        screen.query_one(ActionCard).show_hunks(review.hunks)
        screen.refresh_bindings()

    def hunk_keys_apply(self, action: str) -> bool:
        """Whether hunk key `action` means something now: a reviewed proposal waits, or (`H`)
        the last step changed files and nothing runs."""
        screen = self._main
        if action == "step_hunks":
            return screen.finished is None and not screen.running and self._last_step_hunks() is not None
        return self.hunk_review is not None and screen.pending is not None and not screen.running

    def _last_step_hunks(self) -> tuple[int, list[StepHunk]] | None:
        """The last executed step and its diff's hunks (read once per diff: the footer asks
        every time it refreshes)."""
        executed = self._main._executed_records()
        if not executed or not executed[-1].diff:
            return None
        last = executed[-1]
        if self._read_step_hunks[0] is not last.diff:
            self._read_step_hunks = (last.diff, step_hunks(last.diff))
        hunks = self._read_step_hunks[1]
        return (last.index, hunks) if hunks else None

    def reviewed_decision(self) -> Decision | None:
        """Approve's decision: the kept hunks (all kept: a plain approve); None, said why, when
        every hunk is dropped."""
        hunk_list = self.hunk_list
        if self.hunk_review is None or not hunk_list.changed:
            return Approve()
        try:
            return self.hunk_review.decision(hunk_list.choices)
        except NothingKept as nothing:
            self._main.notify(f"{nothing}: press r", severity="warning", timeout=4)
            return None

    def action_hunk_next(self) -> None:
        self.hunk_list.move(1)

    def action_hunk_prev(self) -> None:
        self.hunk_list.move(-1)

    def action_hunk_keep(self) -> None:
        self.hunk_list.choose(KEEP)
        self.hunk_list.move(1)

    def action_hunk_drop(self) -> None:
        self.hunk_list.choose(DROP)
        self.hunk_list.move(1)

    @work(group="modal", exclusive=True)
    async def action_step_hunks(self) -> None:
        """The last step's hunks; those the user drops are put back as a checkpoint of the
        user's own (undoable), and the model is told."""
        screen, found = self._main, self._last_step_hunks()
        if found is None or screen.driver is None:
            return
        step, hunks = found
        chosen = await screen.app.push_screen_wait(StepHunksScreen(step, hunks))
        if not chosen:
            return
        try:
            await screen.run_on_session(lambda session: revert_in_session(session, step, chosen, len(hunks)))
        except RevertError as error:
            screen.notify(f"Nothing was put back: {error}", severity="error", timeout=6)
            return
        screen.notify(f"{len(chosen)} hunk(s) of step {step} put back as they were; u undoes it", timeout=4)

    @work(group="modal", exclusive=True)
    async def action_hunk_edit(self) -> None:
        screen, hunk_list = self._main, self.hunk_list
        proposal = screen.pending
        if not hunk_list.hunks:
            return
        hunk = hunk_list.hunks[hunk_list.current]
        choice = hunk_list.choice
        text = choice.text if choice.text is not None else "".join(hunk.new)
        edited = await screen.app.push_screen_wait(HunkEditScreen(hunk, text))
        if edited is not None and screen.pending is proposal:
            hunk_list.choose(HunkChoice(text=edited))
