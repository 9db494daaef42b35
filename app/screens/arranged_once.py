"""A screen whose layouts arrange its widgets once, not once more for the frame that follows."""

from __future__ import annotations

from textual._compositor import Compositor, ReflowResult
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget


class ReflowedCompositor(Compositor):
    """Textual's compositor, but a layout (`reflow`) counts as the fresh map of every widget.

    A widget refreshed while it was not on screen (a tab about to be shown, a turn mounted
    below the view) marks the whole-screen map stale; the layout that follows builds that map
    anew but leaves the mark, so the frame's first look-up of a widget's region arranged the
    whole screen a second time (~2.5 ms with 50 turns, once per key or step).
    """

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        result = super().reflow(parent, size)
        self._full_map_invalidated = False  # the map just built covers every widget
        return result


class ArrangedOnce(Screen[None]):
    """A screen laid out by `ReflowedCompositor`."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._compositor = ReflowedCompositor()
