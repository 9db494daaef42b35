"""The TUI's frame clock: its screens tick 240 times a second unless the user set
TEXTUAL_FPS, whichever of navtui's modules imported Textual first."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# keymap (the CLI's first import of Textual before the app), or the app itself, first
PROBE = """
import importlib, sys
importlib.import_module(sys.argv[1])
import asyncio
from textual.app import App
from app.tui import NavApp

class Probe(NavApp):
    def on_mount(self):
        self.interval = self.screen._update_timer._interval
        self.exit()

app = Probe(None, repo=None)
asyncio.run(app.run_async(headless=True))
print(round(1 / app.interval))
"""


@pytest.mark.parametrize("first", ["app.keymap", "app.tui"])
@pytest.mark.parametrize(("chosen", "expected"), [(None, "240"), ("30", "30")])
def test_navtuis_screens_tick_240_times_a_second_unless_the_user_chose(first, chosen, expected):
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    if chosen is not None:
        env["TEXTUAL_FPS"] = chosen
    run = subprocess.run([sys.executable, "-c", PROBE, first], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-1:] == [expected]
