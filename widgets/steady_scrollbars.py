"""Line API widgets whose scrollbars are not repainted by layouts that leave them as they were."""

from __future__ import annotations

from textual.scroll_view import ScrollView


class SteadyScrollbars(ScrollView):
    """A `ScrollView` that a layout of the screen leaves alone when its size did not change.

    The compositor hands a `ScrollView` its region's size as the virtual size, which is never
    the widget's own (its lines), so Textual's `ScrollView` takes every layout of the screen for
    a resize and repaints its scrollbars. One repainted scrollbar is cheap, but a frame repaints
    the box around all its changes: the timeline's scrollbar at the left and a tab switch at the
    right made every such frame repaint the whole work area. The widget keeps its scrollbars in
    step with its lines itself (when lines are added or dropped), so a layout only has to tell
    it about a new size. (How: `app.textual_patches.keep_scrollbars_on_same_size`, applied by
    the app, which alone touches Textual's private parts.)
    """
