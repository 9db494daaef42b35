"""Confirm quitting; say what stays in the working tree and how to get back."""

from __future__ import annotations

from textual.binding import Binding

from app.screens.confirm import ConfirmScreen


class QuitScreen(ConfirmScreen, inherit_bindings=False):
    """Returns True to quit: a `ConfirmScreen` with its own keys (`q` quits too) and ids."""

    BINDINGS = [
        Binding("escape,n", "answer(False)", "Stay", id="navtui.quit.stay", tooltip="Back to the session"),
        Binding("y,q", "answer(True)", "Quit", id="navtui.quit.confirm", tooltip="Quit; the session stays resumable"),
    ]

    def __init__(self, explanation: str) -> None:
        super().__init__("Quit navtui?", explanation, confirm="Quit", cancel="Stay")
