"""The yes/no dialogs are one ConfirmScreen: quitting and overwriting the user's changes are
uses of it, each with its own words (and quitting with its own keys)."""

from __future__ import annotations

from textual.app import App

from app.screens.confirm import ConfirmScreen, OverwriteScreen
from app.screens.quit import QuitScreen


class Asking(App[None]):
    def __init__(self, screen: ConfirmScreen) -> None:
        super().__init__()
        self.asked = screen
        self.answers: list[bool] = []

    def on_mount(self) -> None:
        self.push_screen(self.asked, self.answers.append)


async def answer(screen: ConfirmScreen, key: str) -> tuple[list[bool], str]:
    app = Asking(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        body = str(screen.query_one(".dialog-body").render())
        buttons = [str(b.label) for b in screen.query("Button")]
        assert str(screen.query_one(".dialog-title").render()) and buttons
        await pilot.press(key)
        await pilot.pause()
    return app.answers, body + "\n" + " | ".join(buttons)


async def test_quit_is_a_confirm_screen_that_q_and_y_confirm_and_n_and_esc_refuse():
    assert issubclass(QuitScreen, ConfirmScreen)
    for key, expected in [("q", [True]), ("y", [True]), ("n", [False]), ("escape", [False])]:
        answers, shown = await answer(QuitScreen("x.txt stays."), key)
        assert answers == expected, key
        assert shown == "x.txt stays.\nQuit (y) | Stay (n)"
    ids = {binding.id for binding in QuitScreen.BINDINGS}
    assert ids == {"navtui.quit.stay", "navtui.quit.confirm"}


async def test_overwriting_names_the_files_and_how_many_more_and_only_y_goes_ahead():
    paths = [f"f{n}.txt" for n in range(17)]
    answers, shown = await answer(OverwriteScreen("Undo", paths, since=3), "y")
    assert answers == [True]
    assert shown.startswith("Changed outside the session since step 3:\n  f0.txt\n")
    assert "f14.txt" in shown and "f15.txt" not in shown and "… and 2 more" in shown
    assert shown.endswith("Undo anyway overwrites them (they are saved in a before-undo ref first)."
                          "\nUndo anyway (y) | Cancel (n)")
    answers, shown = await answer(OverwriteScreen("Discard", ["a.txt"]), "n")
    assert answers == [False] and shown.startswith("Changed outside the session:\n  a.txt\n\nDiscard anyway")
