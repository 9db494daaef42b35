"""Text on the action card that lays out the screen only when its height changes."""

from __future__ import annotations

from textual.visual import VisualType, visualize
from textual.widgets import Static


class CardText(Static):
    """A `Static` of a set width (the card's) whose new text asks for a layout of the screen
    only when it takes a different number of rows; text of the same height (one command
    after another, in auto mode one per step) repaints this widget alone."""

    def show(self, content: VisualType) -> None:
        width, height = self.content_size
        same_height = bool(width) and self.display and visualize(
            self, content, markup=self._render_markup
        ).get_height(self.styles, width) == height
        self.update(content, layout=not same_height)
