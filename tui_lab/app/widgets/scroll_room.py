"""The room a scrolling widget that draws its own lines has inside its scrollbars.

Textual's rule for `overflow: auto` shows a scrollbar when the virtual size exceeds the box, and the other one
when the first takes the room it needed. A widget whose layout depends on its box (the Heatmap, the every-head
view) lays itself out again in the room the scrollbars leave, so nothing it draws lies under a scrollbar, and then
has Textual show exactly the scrollbars it laid itself out inside (`show_forecast`).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.geometry import Size
from textual.widget import Widget

from tui_lab.app.textual_private import SizeHookScrollView, refresh_scrollbars


def room_inside_scrollbars(box: Size, bar_w: int, bar_h: int, content: Callable[[int, int], Size]) -> Size:
    """The box less the scrollbars that `content(width, height)`, the size laid out in a box, makes show."""
    width, height = box
    w, h = width, height
    for _ in range(3):  # settles in two: each pass can only take a scrollbar's room away
        size = content(w, h)
        fit = (width - bar_w if size.height > h else width, height - bar_h if size.width > w else height)
        if fit == (w, h):
            break
        w, h = fit
    return Size(max(0, w), max(0, h))


def show_forecast(widget: Widget, inner: Size) -> None:
    """Textual's scrollbars made the ones `inner` (the room the widget laid itself out in) leaves room for.
    Left to `overflow: auto`, Textual decides them itself at moments the widget does not see (at a resize, with
    the old layout's virtual size; with a memory of recent flips that skips its second look), and the long tier
    met a vertical scrollbar kept beside grids that fit (the DLA map, the Tour's grid, the alignment map), the
    read-out's last cells under it. "scroll" and "hidden" leave it nothing to decide."""
    size = widget.size
    widget.styles.overflow_y = "scroll" if inner.width < size.width else "hidden"
    widget.styles.overflow_x = "scroll" if inner.height < size.height else "hidden"
    refresh_scrollbars(widget)  # for this layout, not the one before the resize


class ForecastScrollView(SizeHookScrollView):
    """A ScrollView that lays itself out in `inner`, the room its own scrollbars leave: the scrollbars follow that
    forecast as soon as Textual gives it a new size, not only once its Resize handler has laid it out anew."""

    @property
    def inner(self) -> Size:
        raise NotImplementedError

    def size_set(self) -> None:
        show_forecast(self, self.inner)
