"""Every use navtui makes of Textual's private parts, in one place.

Textual's public API does not reach what three of navtui's speed-ups need: the compositor that
lays a screen out, a widget's reaction to the size a layout gives it, and the period of the
screens' frame clock. Each is done here and nowhere else, and `check()` says, in one line per
loss, what a Textual upgrade took away (tests/test_textual_patches.py runs it, with each
patch's effect, so an upgrade that changes them fails loudly rather than making navtui slower
or wrong in silence). Written against Textual 8.2.

* `ArrangedOnce` (with `ReflowedCompositor`): the main screen's kind, whose layout counts as
  the fresh map and size of every widget it arranged, and which drops the layout requests that
  a layout already answered.
* `keep_scrollbars_on_same_size`, `resize_without_layout`: given to the widgets whose scrollbars
  or contents follow their own lines (`SteadyScrollbars`, `ThoughtStream`) when this module is
  imported (the main screen imports it), so the widgets themselves name nothing private.
* `use_frame_period`: the screens' frame clock (see `app.frame_rate`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import textual.screen
from textual import messages
from textual._compositor import Compositor, ReflowResult
from textual._time import get_time
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget

WidgetClass = TypeVar("WidgetClass", bound=type[Widget])
# The parameters of `Widget._size_updated` the decorators below override.
SIZE_UPDATED_PARAMETERS = ["self", "size", "virtual_size", "container_size", "layout"]


class ReflowedCompositor(Compositor):
    """Textual's compositor, but a layout (`reflow`) counts as the fresh map of every widget,
    and as the size of every widget it just sized.

    - A widget refreshed while it was not on screen marks the whole-screen map stale; the layout
      that follows builds that map anew but leaves the mark, so the frame's first look-up of a
      widget's region arranged the whole screen a second time.
    - A widget that a layout gives a new size gets a new `virtual_size` with it, and that
      reactive asks for a layout of its own: a second layout of the whole screen in the next
      frame. Its new virtual size is set here, quietly, before the screen hands out the sizes
      (as Textual's own layout of a scrolled view does). Widgets with a `_size_updated` of their
      own are left to it.

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = ReflowedCompositor()

    async def _on_layout(self, message: messages.Layout) -> None:
        compositor = self._compositor
        if isinstance(compositor, ReflowedCompositor) and message.time < compositor.reflowed_at:
            message.stop()
            message.prevent_default()  # (Screen's own handler would ask for the layout)


def keep_scrollbars_on_same_size(cls: WidgetClass) -> WidgetClass:
    """A `ScrollView` class that a layout leaves alone when its size and container's did not
    change (Textual takes every layout for a resize and repaints its scrollbars)."""
    inherited = cls._size_updated

    def _size_updated(self: Widget, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        if size == self._size and container_size == self.container_size:
            return False
        return inherited(self, size, virtual_size, container_size, layout)

    cls._size_updated = _size_updated  # type: ignore[method-assign]
    return cls


def resize_without_layout(cls: WidgetClass) -> WidgetClass:
    """A widget class whose new size from a layout moves its scrollbar without asking for
    another layout of the screen in the next frame."""
    inherited = cls._size_updated

    def _size_updated(self: Widget, size: Size, virtual_size: Size, container_size: Size,
                      layout: bool = True) -> bool:
        return inherited(self, size, virtual_size, container_size, False)

    cls._size_updated = _size_updated  # type: ignore[method-assign]
    return cls


def _patch_widgets() -> None:
    """A layout that leaves a `SteadyScrollbars` its size is no resize; the thought stream's
    new height moves its scrollbar without asking for another layout of the screen."""
    from widgets.steady_scrollbars import SteadyScrollbars
    from widgets.thought_stream import ThoughtStream

    keep_scrollbars_on_same_size(SteadyScrollbars)
    resize_without_layout(ThoughtStream)


def use_frame_period(seconds: float) -> None:
    """Screens started from now on tick their frame clock every `seconds`."""
    textual.screen.UPDATE_PERIOD = seconds  # type: ignore[misc]


def check() -> list[str]:
    """What this module relies on that the installed Textual no longer has, one line each."""
    problems: list[str] = []

    def need(ok: Callable[[], object], what: str) -> None:
        try:
            found = ok()
        except Exception as error:  # any failure to find it is the loss being reported
            found = False
            what = f"{what} ({type(error).__name__}: {error})"
        if not found:
            problems.append(what)

    compositor = Compositor()
    need(lambda: hasattr(compositor, "_full_map_invalidated"),
         "Compositor._full_map_invalidated (the whole-screen map's stale mark)")
    need(lambda: hasattr(compositor, "layers"), "Compositor.layers (widgets with geometry)")
    need(lambda: list(inspect.signature(Compositor.reflow).parameters) == ["self", "parent", "size"],
         "Compositor.reflow(parent, size)")
    need(lambda: list(inspect.signature(Widget._size_updated).parameters) == SIZE_UPDATED_PARAMETERS,
         "Widget._size_updated(size, virtual_size, container_size, layout)")
    need(lambda: "_size" in Widget().__dict__, "Widget._size (the size the last layout gave)")
    need(lambda: isinstance(Screen()._compositor, Compositor), "Screen._compositor")
    need(lambda: inspect.iscoroutinefunction(Screen._on_layout),
         "Screen._on_layout (the handler that asks for a layout)")
    need(lambda: isinstance(messages.Layout(Widget()).time, float),
         "messages.Layout.time (when it was posted)")
    need(lambda: isinstance(textual.screen.UPDATE_PERIOD, float), "textual.screen.UPDATE_PERIOD")
    need(lambda: "UPDATE_PERIOD" in inspect.getsource(Screen._update_timer.fget),
         "Screen._update_timer reads UPDATE_PERIOD when it starts the frame clock")
    return problems


_patch_widgets()
