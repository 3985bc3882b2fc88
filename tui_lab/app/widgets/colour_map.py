"""The grids' colour scale, computed: even steps in CIELAB lightness along viridis's hues, one scale per theme.

A weight is read by lightness first (on a projector, in a screenshot, to a colour-blind eye), so level k
sits at lightness `low + k * (high - low) / (LEVELS - 1)`: every step looks the same size. Its hue is
viridis's at that lightness (purple, blue, teal, green, yellow). The dark theme runs dark to light, the light
theme light to dark, so the strongest weight always stands furthest from the background.

A 256-colour terminal gets each colour through Rich's `Color.downgrade`, which rounds to the nearest of the
xterm palette's 6x6x6 cube: neighbouring levels of a smooth scale land on one entry (32 levels made 12).
So each level's hue may move a little off viridis (its lightness never) until its 256-colour entry is new
and lighter (darker) than the previous level's: the levels stay distinct and in order there too.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from rich._palettes import EIGHT_BIT_PALETTE
from rich.color import Color, ColorSystem
from textual.color import Color as TextualColor
from textual.color import Lab, lab_to_rgb, rgb_to_lab

LEVELS = 16  # the most for which both scales keep a distinct, ordered 256-colour entry per level
# matplotlib's viridis at 0, 0.25, 0.5, 0.75 and 1: its hue at each lightness.
VIRIDIS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
# CIELAB lightness of the lowest and the highest level. The backgrounds: textual-dark 5.5, textual-light 89.2.
LIGHTNESS = {True: (26.0, 92.0), False: (78.0, 22.0)}  # dark theme, light theme
HUE_SHIFT = 30  # how far (in a*, b*) a level's colour may leave viridis to find its own 256-colour entry
ENTRY_WEIGHT = 20  # a unit of the 256-colour entry's lightness error costs as much as this much hue shift squared
MIN_STEP_256 = 1.0  # least lightness between neighbouring levels' 256-colour entries
_SHIFTS = sorted((p for p in itertools.product(range(-HUE_SHIFT, HUE_SHIFT + 1, 3), repeat=2)
                  if p[0] ** 2 + p[1] ** 2 <= HUE_SHIFT ** 2), key=lambda p: p[0] ** 2 + p[1] ** 2)


def lightness(colour: Color) -> float:
    """CIELAB L* (0 black .. 100 white) of a truecolor or 256-colour Rich colour."""
    r, g, b = colour.get_truecolor()
    return rgb_to_lab(TextualColor(r, g, b)).L


def eight_bit(colour: Color) -> int:
    """The xterm palette entry a 256-colour terminal shows for `colour` (Rich's own rounding)."""
    number = colour.downgrade(ColorSystem.EIGHT_BIT).number
    assert number is not None
    return number


@cache
def eight_bit_lightness(number: int) -> float:
    return lightness(Color.from_rgb(*EIGHT_BIT_PALETTE[number]))


def viridis_at(l_star: float) -> Lab:
    """Viridis's colour at lightness `l_star`: a* and b* interpolated between the stops around it."""
    stops = [rgb_to_lab(TextualColor(*rgb)) for rgb in VIRIDIS]
    for lo, hi in zip(stops, stops[1:], strict=False):
        if l_star <= hi.L:
            f = max(0.0, (l_star - lo.L) / (hi.L - lo.L))
            return Lab(l_star, lo.a + (hi.a - lo.a) * f, lo.b + (hi.b - lo.b) * f)
    return Lab(l_star, stops[-1].a, stops[-1].b)


@dataclass(frozen=True)
class Level:
    colour: Color  # truecolor, at the level's exact lightness
    entry: int  # its 256-colour palette entry


def _in_gamut(lab: Lab) -> Color | None:
    """The sRGB colour of `lab`, or None when sRGB cannot show it (a channel clipped changes its lightness)."""
    c = lab_to_rgb(lab)
    rgb = (c.r, c.g, c.b)
    # 255 is left out: Rich's downgrade divides by zero on a channel-pure white's saturation
    if not all(0 <= v <= 254 for v in rgb) or abs(rgb_to_lab(c).L - lab.L) > 0.6:
        return None
    return Color.from_rgb(*rgb)


def _level(l_star: float, taken: set[int], beyond: float | None, rising: bool) -> Level:
    """The colour nearest viridis at `l_star` whose 256-colour entry is unused and past `beyond`'s lightness,
    that entry's lightness kept near `l_star` too (so the 256-colour scale also steps evenly where it can)."""
    base, best, best_cost = viridis_at(l_star), None, float("inf")
    for da, db in _SHIFTS:  # nearest first: past the best cost found, no shift can do better
        if da * da + db * db >= best_cost:
            break
        colour = _in_gamut(Lab(l_star, base.a + da, base.b + db))
        if colour is None or (entry := eight_bit(colour)) in taken:
            continue
        entry_l = eight_bit_lightness(entry)
        if beyond is not None and (entry_l - beyond) * (1 if rising else -1) < MIN_STEP_256:
            continue
        cost = da * da + db * db + ENTRY_WEIGHT * (entry_l - l_star) ** 2
        if cost < best_cost:
            best, best_cost = Level(colour, entry), cost
    if best is None:
        raise ValueError(f"no colour at lightness {l_star:.1f} keeps a distinct 256-colour entry")
    return best


@cache
def scale(dark: bool, levels: int = LEVELS) -> tuple[Level, ...]:
    """The theme's levels, lowest weight first."""
    low, high = LIGHTNESS[dark]
    out: list[Level] = []
    for k in range(levels):
        beyond = eight_bit_lightness(out[-1].entry) if out else None
        out.append(_level(low + (high - low) * k / (levels - 1), {lv.entry for lv in out}, beyond, high > low))
    return tuple(out)


def palette(dark: bool) -> list[Color]:
    return [lv.colour for lv in scale(dark)]
