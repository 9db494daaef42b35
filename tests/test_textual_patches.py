"""What navtui relies on in Textual's private parts (app/textual_patches.py) is still there and
still does what the patches expect: a Textual upgrade that changes it fails here, by name."""

from __future__ import annotations

import textual.screen
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.widget import Widget

from app import textual_patches
from app.textual_patches import (
    ArrangedOnce,
    ReflowedCompositor,
    keep_scrollbars_on_same_size,
    resize_without_layout,
    use_frame_period,
)


def test_every_private_part_relied_on_is_there():
    assert textual_patches.check() == []


def test_no_other_module_touches_textual_internals():
    """The one door: private Textual names appear only in app/textual_patches.py."""
    from pathlib import Path

    private = ("_size_updated", "_compositor", "UPDATE_PERIOD", "textual._", "_on_layout",
               "_full_map_invalidated")
    root = Path(textual_patches.__file__).resolve().parent.parent
    offenders = [
        f"{path.relative_to(root)}: {name}"
        for folder in ("app", "widgets")
        for path in sorted((root / folder).rglob("*.py"))
        if path.name != "textual_patches.py"
        for name in private
        if name in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


class Lines(ScrollView):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[bool] = []

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        self.calls.append(layout)
        return super()._size_updated(size, virtual_size, container_size, layout)


@keep_scrollbars_on_same_size
class Steady(Lines):
    pass


@resize_without_layout
class Quiet(Lines):
    pass


class Host(App[None]):
    def __init__(self, *widgets: Widget) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self.widgets


async def test_a_layout_that_leaves_the_size_is_not_a_resize():
    steady = Steady()
    async with Host(steady).run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        seen = len(steady.calls)
        assert seen >= 1  # the first layout sized it
        changed = steady._size_updated(steady.size, Size(5, 5), steady.container_size)
        assert changed is False and len(steady.calls) == seen  # Textual's was not even asked


async def test_a_resize_asks_for_no_layout_of_its_own():
    quiet = Quiet()
    async with Host(quiet).run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        assert quiet.calls and not any(quiet.calls)


async def test_the_main_screens_kind_lays_out_with_the_reflowed_compositor():
    class Screen(ArrangedOnce):
        def compose(self) -> ComposeResult:
            yield Widget()

    class Shown(App[None]):
        def on_mount(self) -> None:
            self.push_screen(Screen())

    async with Shown().run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        compositor = pilot.app.screen._compositor
        assert isinstance(compositor, ReflowedCompositor) and compositor.reflowed_at > 0
        assert compositor._full_map_invalidated is False


async def test_the_frame_period_reaches_the_screens_clock():
    before = textual.screen.UPDATE_PERIOD
    use_frame_period(1 / 200)
    try:
        async with Host().run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            assert pilot.app.screen._update_timer._interval == 1 / 200
    finally:
        use_frame_period(before)
