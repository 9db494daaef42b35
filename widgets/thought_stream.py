"""The model's text, streamed token by token into Markdown that follows the end of the stream."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import MountError, Widget
from textual.widgets import Static

from agent_core.sanitize import visible
from widgets._css import css_beside
from widgets.plain_text import plain
from widgets.turn_text import TurnText

# Thoughts longer than this (characters) keep their streamed form at the end of a turn.
REPLACE_LIMIT = 8_000
NO_THOUGHT = "*(no thought, only an action)*"
# While a turn streams, the garbage collector's full passes wait (they stop the UI for 0.1-0.4 s
# once a session has built a few thousand widgets); they run once the turn has ended.
DEFERRED_FULL_COLLECTION = 1_000_000
COLLECT_AFTER = 0.25  # seconds after a turn ends (its last text painted by then)


class FoldedTurn(Static, can_focus=True):
    """A finished turn folded to one line (its title and first line); Enter or a click unfolds
    it to its full text (plain, not Markdown: a few cheap widgets however long the session)."""

    BINDINGS = [Binding("enter", "toggle_turn", "Unfold", id="thought_stream.toggle_turn")]

    def __init__(self, title: str, text: str) -> None:
        self.title = title
        self.full_text = plain(text.strip())  # shown as plain text: no raw code marks
        first = next((line.strip() for line in self.full_text.splitlines() if line.strip()), "")
        self.line = f"▸ {title}" + (f" · {first}" if first else "")
        super().__init__(self.line, classes="turn-title -folded", markup=False)
        self.tooltip = "Enter or click: show this turn in full"

    @property
    def folded(self) -> bool:
        return self.has_class("-folded")

    def action_toggle_turn(self) -> None:
        folded = not self.folded
        self.set_class(folded, "-folded")
        self.update(self.line if folded else f"▾ {self.title}\n{self.full_text}")

    def on_click(self) -> None:
        self.action_toggle_turn()


@dataclass
class HeldTurn:
    """A turn begun while the stream is held: its title and the text it shows, not mounted yet."""

    title: str
    parts: list[str] = field(default_factory=list)  # the streamed text, made visible
    shown: str | None = None  # the parsed thought shown instead, once the turn ended
    ended: bool = False

    @property
    def source(self) -> str:
        return self.shown if self.shown is not None else "".join(self.parts)


class ThoughtStream(VerticalScroll):
    """One `TurnText` per model turn; the last `open_turns` stay Markdown, older ones are folded
    to one line each (`FoldedTurn`), and turns past `max_turns` are dropped, so the widgets
    mounted stay few however long the session runs.

    While the stream is held (`hold`, e.g. for one auto-mode drain of the session's events),
    turns and notes are only noted; `release` mounts them at once, the turns that are already
    past the last `open_turns` directly folded and those past `max_turns` not at all.

    Streamed text goes to the live turn's `TurnText`, which takes it in once per frame and
    mounts nothing, so a fast model never leaves the screen (or its keys) behind. The container
    is anchored, so it follows new text until the user scrolls up; a `1fr` spacer after the turns
    keeps short content at the top instead of pinned to the bottom.
    """

    DEFAULT_CSS = css_beside(__file__)
    FULL_COLLECTION = gc.get_threshold()[2]  # the collector's own setting

    def __init__(self, *, max_turns: int = 30, open_turns: int = 2, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_turns = max_turns
        self.open_turns = max(open_turns, 1)
        self._opened: list[tuple[Static, TurnText]] = []  # turns shown in full, oldest first
        self._text: list[str] = []
        self._live: TurnText | None = None  # the turn accepting text
        self._held: list[HeldTurn | Static] | None = None  # while held: what is not mounted yet
        self._held_live: HeldTurn | None = None  # while held: the turn accepting text
        self._spacer = Static(classes="spacer")

    @property
    def text(self) -> str:
        """The current turn's text as the model wrote it (its parsed thought once it ended)."""
        if len(self._text) > 1:
            self._text[:] = ["".join(self._text)]
        return self._text[0] if self._text else ""

    @property
    def live(self) -> TurnText | None:
        """The turn being written, if one is."""
        return self._live

    @property
    def rendering(self) -> bool:
        """True while text given is waiting for the next frame."""
        return any(turn.catching_up for _, turn in self._opened)

    def compose(self) -> ComposeResult:
        yield self._spacer

    def on_mount(self) -> None:
        self.anchor()

    async def begin_turn(self, title: str) -> None:
        """Start a new block for a model turn titled `title`."""
        await self.end_turn()
        self._text = []
        if self._held is not None:
            self._held_live = HeldTurn(title)
            self._held.append(self._held_live)
            self._defer_full_collections(True)
            return
        heading, turn = Static(title, classes="turn-title", markup=False), TurnText(classes="turn")
        self._live = turn
        self._defer_full_collections(True)
        with self.app.batch_update():  # folding the last turn and mounting this one: one layout
            await self._fold(self.open_turns - 1)
            self._opened.append((heading, turn))
            await self._mounted(heading, turn)

    async def write(self, fragment: str) -> None:
        """Add streamed model text to the current turn (shown with the next frame)."""
        if self._live is None and self._held_live is None:
            await self.begin_turn("Model")
        self._text.append(fragment)
        if self._held_live is not None:
            self._held_live.parts.append(visible(fragment))
            return
        assert self._live is not None
        self._live.append(visible(fragment))

    async def end_turn(self, thought: str | None = None) -> None:
        """Finish the current turn; a given `thought` then replaces the raw streamed text
        (tool-call markup and all) unless it is too long to re-render at once."""
        held, self._held_live = self._held_live, None
        if held is not None:
            self.set_timer(COLLECT_AFTER, self._collect_between_turns)
            if thought is not None and len(thought) <= REPLACE_LIMIT:
                self._text = [thought]
                shown = visible(thought).strip() or NO_THOUGHT
                if shown != held.source.strip():
                    held.shown = shown
            held.ended = True
            return
        turn, self._live = self._live, None
        if turn is None:
            return
        self.set_timer(COLLECT_AFTER, self._collect_between_turns)
        if thought is not None and len(thought) <= REPLACE_LIMIT:
            self._text = [thought]
            shown = visible(thought).strip() or NO_THOUGHT
            if shown != turn.source.strip():
                turn.replace(shown)
        turn.finish()

    async def settled(self) -> None:
        """Show everything given now, without waiting for the next frame."""
        for _, turn in self._opened:
            if turn.catching_up and turn.is_mounted:
                turn.update_now()

    async def note(self, text: str, variant: str = "info") -> None:
        """A line that is not model text: a rejection, a user message, a format error."""
        await self.end_turn()
        shown = text if variant == "user" else plain(text)  # the user's own words stay as typed
        line = Static(visible(shown), classes=f"note -{variant}", markup=False)
        if self._held is not None:
            self._held.append(line)
        else:
            await self._mounted(line)

    def hold(self) -> None:
        """Note turns and notes from now on without mounting them, until `release`."""
        if self._held is None:
            self._held = []

    async def release(self) -> None:
        """Mount what was noted while held, in one go: the turns that end up within the last
        `open_turns` in full (the last one still live if it has not ended), the ones before
        them folded, none that `max_turns` would drop at once."""
        held, self._held = self._held, None
        live, self._held_live = self._held_live, None
        if not held:
            return
        starts = [n for n, entry in enumerate(held) if isinstance(entry, HeldTurn)]
        dropped = len(starts) - self.max_turns  # (the turns mounted before go first, in `_trim`)
        if dropped > 0:  # everything before the first turn that stays
            held = held[starts[dropped]:]
        kept_turns = len(starts) - max(dropped, 0)
        opened = min(kept_turns, self.open_turns)
        widgets: list[Widget] = []
        opened_now: list[tuple[Static, TurnText]] = []
        seen = 0
        for entry in held:
            if not isinstance(entry, HeldTurn):
                widgets.append(entry)
                continue
            seen += 1
            if seen <= kept_turns - opened:
                widgets.append(FoldedTurn(entry.title, entry.source))
                continue
            heading = Static(entry.title, classes="turn-title", markup=False)
            turn = TurnText(entry.source, classes="turn")
            if entry.ended:
                turn.finish()
            elif entry is live:
                self._live = turn
            opened_now.append((heading, turn))
            widgets += [heading, turn]
        with self.app.batch_update():  # the folds and the new turns: one layout
            await self._fold(self.open_turns - opened)
            self._opened += opened_now
            await self._mounted(*widgets)

    async def _mounted(self, *widgets: Widget) -> None:
        """Mount `widgets` after the last turn, then drop turns past `max_turns`; once the stream
        is off the screen (its screen closing), nothing is shown any more."""
        if not self.is_attached:
            return
        try:
            await self.mount_all(widgets, before=self._spacer)
        except MountError:
            return
        await self._trim()

    def on_unmount(self) -> None:
        self._defer_full_collections(False)

    def _collect_between_turns(self) -> None:
        """Once the turn's last text is painted, let full collections run again (unless the
        next turn streams already)."""
        if self._live is None:
            self._defer_full_collections(False)

    @staticmethod
    def _defer_full_collections(defer: bool) -> None:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, DEFERRED_FULL_COLLECTION if defer else ThoughtStream.FULL_COLLECTION)

    async def _fold(self, keep: int) -> None:
        """Fold all but the last `keep` turns still shown in full."""
        while len(self._opened) > keep:
            heading, turn = self._opened.pop(0)
            if not heading.is_attached:
                continue
            folded = FoldedTurn(str(heading.render()), turn.source)
            await self.mount(folded, before=heading)
            await self.remove_children([heading, turn])

    async def _trim(self) -> None:
        titles = list(self.query(".turn-title"))
        excess = len(titles) - self.max_turns
        if excess <= 0:
            return
        cutoff = titles[excess]
        doomed = []
        for child in self.children:
            if child is cutoff:
                break
            doomed.append(child)
        await self.remove_children(doomed)
