"""Line API widgets whose scrollbars are not repainted by layouts that leave them as they were."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


class SteadyScrollbars(ScrollView):
    """A `ScrollView` that a layout of the screen leaves alone when its size did not change.

    The compositor hands a `ScrollView` its region's size as the virtual size, which is never
    the widget's own (its lines), so Textual's `ScrollView` takes every layout of the screen for
    a resize and repaints its scrollbars. One repainted scrollbar is cheap, but a frame repaints
    the box around all its changes: the timeline's scrollbar at the left and a tab switch at the
    right made every such frame repaint the whole work area. The widget keeps its scrollbars in
    step with its lines itself (when lines are added or dropped), so a layout only has to tell
    it about a new size.
    """

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        if size == self._size and container_size == self.container_size:
            return False
        return super()._size_updated(size, virtual_size, container_size, layout)
