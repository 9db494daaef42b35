"""Textual's frame rate for navtui's screens: 120 frames a second where Textual's default is 60.

Textual shows the effect of a key or a token with its next frame, on a fixed clock: at 60 a
key's effect waits 8 ms on average for it, and up to 17 ms. At 120 the wait halves. Measured
from outside (`bench/ui_stream.py`, 100 tok/s), key -> screen p50 went from 24-25 to 18-19 ms.
The live turn still takes text in at most 60 times a second (`widgets.turn_text.FRAME`), so a
fast stream is not drawn twice as often.

Textual reads `TEXTUAL_FPS` once, at its import, which in navtui happens in several places
(keymaps, widgets, the app). So this sets the period of the screens' frame clock (which each
screen reads when it starts it) instead, whatever was imported first. A `TEXTUAL_FPS` the user
set still decides.
"""

from __future__ import annotations

import os

import textual.screen

FRAMES_PER_SECOND = 120


def use_navtui_frame_rate() -> None:
    """Screens started from now on draw at `FRAMES_PER_SECOND`, unless `TEXTUAL_FPS` is set."""
    if "TEXTUAL_FPS" not in os.environ:
        textual.screen.UPDATE_PERIOD = 1 / FRAMES_PER_SECOND
