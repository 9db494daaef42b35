"""A screen whose layouts arrange its widgets once, not once more for the frame that follows."""

from __future__ import annotations

from textual import messages
from textual._compositor import Compositor, ReflowResult
from textual._time import get_time
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget


class ReflowedCompositor(Compositor):
    """Textual's compositor, but a layout (`reflow`) counts as the fresh map of every widget,
    and as the size of every widget it just sized.

    - A widget refreshed while it was not on screen (a tab about to be shown, a turn mounted
      below the view) marks the whole-screen map stale; the layout that follows builds that map
      anew but leaves the mark, so the frame's first look-up of a widget's region arranged the
      whole screen a second time (~2.5 ms with 50 turns, once per key or step).
    - A widget that a layout gives a new size (one just mounted, a turn or a card whose text
      grew) gets a new `virtual_size` with it, and that reactive asks for a layout of its own:
      a second layout of the whole screen in the next frame, which finds every size as the
      first one left it. Its new virtual size is set here, quietly, before the screen hands out
      the sizes (as Textual's own layout of a scrolled view does); the widget still gets its
      `Resize` and its scrollbars, and what changes its content on a resize asks for a layout
      itself. (Widgets with a `_size_updated` of their own are left to it.)

    `reflowed_at` is when the last layout began (Textual's message clock).
    """

    reflowed_at = 0.0

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        self.reflowed_at = get_time()
        result = super().reflow(parent, size)
        self._full_map_invalidated = False  # the map just built covers every widget
        for widget, geometry in self.layers:
            if (widget._size != geometry.region.size
                    and type(widget)._size_updated is Widget._size_updated):
                widget.set_reactive(Widget.virtual_size, geometry.virtual_size)
        return result


class ArrangedOnce(Screen[None]):
    """A screen laid out by `ReflowedCompositor`, which lays out once for what asked before.

    A widget asks for a layout by posting a message when its own queue is next idle, after
    clearing the arrangements it is part of. Messages posted before a layout began were seen by
    it; handled after it (the screen's queue was busy: a drain mounting turns), each would lay
    out the whole screen again, for nothing. They are dropped.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._compositor = ReflowedCompositor()

    async def _on_layout(self, message: messages.Layout) -> None:
        if message.time < self._compositor.reflowed_at:
            message.stop()
            message.prevent_default()  # (Screen's own handler would ask for the layout)
