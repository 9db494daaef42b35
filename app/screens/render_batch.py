"""Pacing the main screen's renders: auto-mode drains of the inbox and the Footer's refreshes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.timer import Timer


class RenderBatch:
    """Session events rendered in drains of the inbox; in auto mode, at most one drain per
    `frame` seconds, and within a drain only the last of what replaces a view is shown.

    `wake` asks for the next drain (posts the screen's wake-up message); `auto` says whether
    the screen is in auto mode now.
    """

    def __init__(self, screen: Screen[None], frame: float, wake: Callable[[], None],
                 auto: Callable[[], bool]) -> None:
        self._screen = screen
        self._frame = frame
        self._wake = wake
        self._auto = auto
        self.draining = False  # rendering a drain of the inbox: views are shown at its end
        self._views: dict[str, list[Callable[[], None]]] = {}  # view -> what it shows at the end
        self._next_drain = 0.0  # auto mode: drains are at least `frame` apart
        self._timer: Timer | None = None

    def hold(self) -> bool:
        """A drain starts now: whether its events are held back to the frame (auto mode, too
        soon after the last drain; the next drain is then timed), else the frame restarts."""
        now = time.monotonic()
        held = self._auto() and now < self._next_drain
        if held:
            # Auto mode: steps come faster than anyone reads them; what arrives within one
            # frame is rendered together.
            if self._timer is None:
                self._timer = self._screen.set_timer(self._next_drain - now, self._due)
        else:
            self._next_drain = now + self._frame
        return held

    def _due(self) -> None:
        self._timer = None
        self._wake()

    def view(self, name: str, show: Callable[[], None], *, replaces: bool = True) -> None:
        """Show something in view `name` (the card, the output, a diff). In auto mode, while a
        drain is rendered, only the last of what replaces a view's content is shown, at the
        drain's end (with what was added to it after); otherwise at once."""
        if not (self.draining and self._auto()):
            show()
        elif replaces or name not in self._views:
            self._views[name] = [show]
        else:
            self._views[name].append(show)

    def take_views(self) -> dict[str, list[Callable[[], None]]]:
        """What the drain held back, view by view (and nothing is held any more)."""
        views, self._views = self._views, {}
        return views


class FooterRefresh:
    """The screen's Footer (and palette) refreshed at most once per frame, however many ask.

    Each refresh rebuilds the Footer's keys (a recompose that re-applies CSS to every key), so
    a change of the screen's state refreshes it only if by the next frame a key was enabled or
    disabled. `refresh` is the screen's own refresh of its bindings; `keys` says which of its
    keys are enabled now.
    """

    def __init__(self, screen: Screen[None], refresh: Callable[[], None],
                 keys: Callable[[], tuple[bool | None, ...]]) -> None:
        self._screen = screen
        self._refresh = refresh
        self._keys = keys
        self._due: str | None = None  # at the next frame: "always" or "if changed"
        self._scheduled = False
        self._shown: tuple[bool | None, ...] = ()

    def always(self) -> None:
        """Refresh at the next frame."""
        self._due = "always"
        self._schedule()

    def if_changed(self) -> None:
        """Refresh at the next frame if by then a key is enabled or disabled (in auto mode a
        step sets and clears `pending` and `running` within one drain, and no key changes)."""
        if self._due is None:
            self._due = "if changed"
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self._screen.call_after_refresh(self._publish)

    def _publish(self) -> None:
        due, self._due, self._scheduled = self._due, None, False
        if not self._screen.is_attached:
            return
        keys = self._keys()
        if due == "always" or keys != self._shown:
            self._shown = keys
            self._refresh()
