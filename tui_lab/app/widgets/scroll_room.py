"""The room a scrolling widget that draws its own lines has inside its scrollbars.

Textual's rule for `overflow: auto` shows a scrollbar when the virtual size exceeds the box, and the other one
when the first takes the room it needed. A widget whose layout depends on its box (the Heatmap, the every-head
view) lays itself out again in the room the scrollbars leave, so nothing it draws lies under a scrollbar.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.geometry import Size


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
