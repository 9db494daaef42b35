"""Textual's frame clock for navtui's screens: 240 ticks a second where Textual's default is 60.

Textual shows the effect of a key or a token with its next frame, on a fixed clock that stops
while nothing needs drawing. A frame drawn when the clock restarts comes at once, but the clock
then waits for the next tick after one whole period has passed (its catch-up skips a tick): a
key pressed just after such a frame waited up to two periods, 17 ms at 120 a second (traced in
the app: key handled in 0.5 ms, frame written 13-16 ms later). At 240 that wait is at most 8 ms.
Measured from outside (`bench/ui_stream.py`, 100 tok/s, navtui at 120 and 240 beside rich.live
in one run): key -> screen p99 21.5 -> 13.8 ms (rich.live 14.3). The clock only ticks while
something is to be drawn, and the live turn still takes text in at most 60 times a second
(`widgets.turn_text.FRAME`), so a fast stream is not drawn more often.

Textual reads `TEXTUAL_FPS` once, at its import, which in navtui happens in several places
(keymaps, widgets, the app). So this sets the period of the screens' frame clock (which each
screen reads when it starts it) instead, whatever was imported first. A `TEXTUAL_FPS` the user
set still decides.
"""

from __future__ import annotations

import os

from app.textual_patches import use_frame_period

FRAMES_PER_SECOND = 240


def use_navtui_frame_rate() -> None:
    """Screens started from now on draw at `FRAMES_PER_SECOND`, unless `TEXTUAL_FPS` is set."""
    if "TEXTUAL_FPS" not in os.environ:
        use_frame_period(1 / FRAMES_PER_SECOND)
