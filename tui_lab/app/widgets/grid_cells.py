"""What one grid cell looks like: the theme's colour scale, the masked hatch, the cursor, the number inside.

Pure Rich (segments and styles), shared by the heatmap and the model view's small multiples. A cell's
colour means its weight and nothing else: masked cells are hatched and cells without data are blank.
"""

from __future__ import annotations

import math
from functools import lru_cache

from rich.color import Color
from rich.segment import Segment
from rich.style import Style

from tui_lab.app.widgets import colour_map
from tui_lab.app.widgets.colour_map import LEVELS

HATCH = "╱"
CURSOR_DOT = "●"
SWATCHES = 16  # the legend's colours at most
INK_SWITCH = 55.0  # cells lighter than this (CIELAB L*) take black numbers, darker ones white

# The app has one theme at a time: its watcher (app.py) calls use_theme, and every grid reads palette().
_theme = {"dark": True}


def use_theme(dark: bool) -> None:
    _theme["dark"] = dark


def palette() -> tuple[Color, ...]:
    """The colour of each level, lowest weight first, in the theme the app shows now (computed on first use)."""
    return colour_map.palette(_theme["dark"])


def ink(lvl: int) -> Style:
    """Numbers on a cell of level `lvl`: the ink that reads on its colour."""
    return _inks(_theme["dark"])[lvl]


@lru_cache(maxsize=2)
def _inks(dark: bool) -> list[Style]:
    return [INK[colour_map.lightness(c) > INK_SWITCH] for c in colour_map.palette(dark)]


CURSOR = Color.parse("#ff2fa0")
EMPTY = Style()
MASKED = Style(color="grey50", dim=True)
MARK = Style(bold=True, reverse=True)  # the cursor's row and column labels
CURSOR_INK = Style(color=CURSOR, bold=True)
INK = (Style(color="white"), Style(color="black"))  # numbers on dark / on bright cells


def fmt_value(v: float) -> str:
    """Two decimals (three digits past 100); a value that rounds to zero reads 0.00, never -0.00 (an ablation's
    smallest change, -0.0004 nats, made the legend say "-0.00")."""
    text = f"{v:.2f}" if abs(v) < 100 else f"{v:.3g}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def level(v: float, lo: float, hi: float) -> int | None:
    """The palette index of `v` on the scale lo..hi; None for NaN (no data)."""
    if not math.isfinite(v):
        return None
    span = hi - lo
    t = 0.5 if span <= 0 else (v - lo) / span
    return max(0, min(LEVELS - 1, int(t * (LEVELS - 1) + 0.5)))


@lru_cache(maxsize=4096)
def style(fg: Color | None, bg: Color | None, ink: Style | None = None) -> Style:
    return (ink or EMPTY) + Style(bgcolor=bg) if ink is not None else Style(color=fg, bgcolor=bg)


def full_cell(value: float, lvl: int | None, masked: bool, on_cursor: bool, text_line: bool, w: int,
              numbers: bool) -> Segment:
    """One cell `w` wide: the weight's colour (its number when asked and it fits), hatch, or blank.

    The cursor keeps the cell's colour (so the eye still reads the weight) and adds brackets.
    """
    bracket = on_cursor and text_line and w >= 2
    if on_cursor and w == 1:  # no room for brackets: a dot in the cursor's ink on the cell's colour
        if masked or lvl is None:
            return Segment(HATCH if masked else CURSOR_DOT, CURSOR_INK)
        return Segment(CURSOR_DOT, style(None, palette()[lvl], CURSOR_INK))
    if masked:
        body = "[" + HATCH * (w - 2) + "]" if bracket else HATCH * w
        return Segment(body, CURSOR_INK if bracket else MASKED)
    if lvl is None:
        return Segment(" " * w)
    text = fmt_value(value) if numbers and text_line else ""
    if len(text) > w - (2 if bracket else 1):
        text = ""
    inner = text.center(w - 2) if w >= 2 else ""
    if bracket:
        body = "[" + inner + "]"
    elif len(text) > w - 2:  # one spare column: the gap goes after the number, under its column's label, so the
        body = text  # last column's number never touches the pane's edge (issue 36's crawler: "0.05▅▅", a scrollbar)
    else:
        body = (" " + inner + " ")[:w]
    ink_style = CURSOR_INK if bracket else ink(lvl)
    return Segment(body.ljust(w)[:w], style(None, palette()[lvl], ink_style))


def dense_cell(up: Color | None, low: Color | None, w: int) -> Segment:
    """Two matrix rows in one character: the upper half in the glyph's colour, the lower behind it."""
    if up is None and low is None:
        return Segment(" " * w)
    if up is None:
        return Segment("▄" * w, style(low, None))
    return Segment("▀" * w, style(up, low))


def legend(lo: float, hi: float, any_masked: bool, width: int | None = None) -> list[Segment]:
    """The colour scale with its min and max, and the key for masked cells when the grid has any.

    Narrower than `width`, it gives up detail before meaning: the masked key goes first (the hatch says
    it on the grid), then swatches, down to two between the min and the max; what still does not fit
    ends in an ellipsis. The last cell stays free: "1.00" against the pane's edge (or against the next grid's
    legend, "1.000.00") reads as a number cut short (issue 36's crawler, the Train view's two alignment grids),
    and "masked" against it as a word cut (the long tier, Generate's grid at 80x24).
    """
    key = [Segment("  "), Segment(HATCH * 2, MASKED), Segment(" masked")] if any_masked else []
    ends = len(fmt_value(lo)) + len(fmt_value(hi)) + 2
    for swatches, extra in ((SWATCHES, key), (SWATCHES, []), (max(2, (width or 0) - ends - 1), [])):
        parts = _scale(lo, hi, min(swatches, SWATCHES, LEVELS)) + extra
        if width is None or Segment.get_line_length(parts) + 1 <= width:
            return parts
    if width <= 1:
        return [Segment("…"[:width])]
    return [*next(iter(Segment.divide(parts, [width - 1]))), Segment("…")]


def _scale(lo: float, hi: float, swatches: int) -> list[Segment]:
    """`swatches` colours spread from the lowest level to the highest, between the min and the max."""
    picks = [round(i * (LEVELS - 1) / (swatches - 1)) for i in range(swatches)]
    colours = palette()
    bar = [Segment(" ", Style(bgcolor=colours[i])) for i in picks]
    return [Segment(f"{fmt_value(lo)} "), *bar, Segment(f" {fmt_value(hi)}")]
