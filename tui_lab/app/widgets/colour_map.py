"""The grids' colour scale, computed: even steps in CIELAB lightness along viridis's hues, one scale per theme.

A weight is read by lightness first (on a projector, in a screenshot, to a colour-blind eye), so level k
sits at lightness `low + k * (high - low) / (LEVELS - 1)`: every step looks the same size. Its hue is
viridis's at that lightness (purple, blue, teal, green, yellow). The dark theme runs dark to light, the light
theme light to dark, so the strongest weight always stands furthest from the background.

A 256-colour terminal gets each colour through Rich's `Color.downgrade`, which rounds to the nearest of the
xterm palette's 6x6x6 cube: neighbouring levels of a smooth scale land on one entry (32 levels made 12).
So each level's hue may move a little off viridis (its lightness never, nor towards grey), and the levels'
colours are chosen together (the cheapest chain, by dynamic programming) so that their 256-colour entries
are distinct and each lighter (darker) than the one before: the levels stay distinct and in order there too.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from rich._palettes import EIGHT_BIT_PALETTE
from rich.color import Color, ColorSystem
from textual.color import Color as TextualColor
from textual.color import Lab, lab_to_rgb, rgb_to_lab

# 16 levels: steps of 4.4 (dark) and 3.7 (light) L*, each one visible on a projector (24 keep distinct
# 256-colour entries too, but their steps of 2.9 L* blur together).
LEVELS = 16
# matplotlib's viridis at 0, 0.25, 0.5, 0.75 and 1: its hue at each lightness.
VIRIDIS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
# CIELAB lightness of the lowest and the highest level. The backgrounds: textual-dark 5.5, textual-light 89.2.
LIGHTNESS = {True: (26.0, 92.0), False: (78.0, 22.0)}  # dark theme, light theme
HUE_SHIFT = 30  # how far (in a*, b*) a level's colour may leave viridis to find its own 256-colour entry
ENTRY_WEIGHT = 1  # a unit of the 256-colour entry's lightness error costs as much as this much hue shift squared
MIN_STEP_256 = 1.0  # least lightness between neighbouring levels' 256-colour entries
CHROMA_KEPT = 0.6  # a level keeps at least this share of viridis's chroma at its lightness
_SHIFTS = [p for p in itertools.product(range(-HUE_SHIFT, HUE_SHIFT + 1, 3), repeat=2)
           if p[0] ** 2 + p[1] ** 2 <= HUE_SHIFT ** 2]


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


def _chroma(lab: Lab) -> float:
    return (lab.a ** 2 + lab.b ** 2) ** 0.5


def _candidates(l_star: float) -> dict[int, tuple[float, Color]]:
    """Each 256-colour entry a colour at `l_star` near viridis can land on, with the cheapest such colour.

    Cost: the hue shift squared, plus ENTRY_WEIGHT times the entry's lightness error squared (so the 256-colour
    scale steps evenly too where it can). A shift that greys the colour (chroma under CHROMA_KEPT of viridis's)
    is refused: a grey cell reads as "no data"."""
    base, out = viridis_at(l_star), {}
    for da, db in _SHIFTS:
        lab = Lab(l_star, base.a + da, base.b + db)
        colour = None if _chroma(lab) < CHROMA_KEPT * _chroma(base) else _in_gamut(lab)
        if colour is None:
            continue
        entry = eight_bit(colour)
        cost = da * da + db * db + ENTRY_WEIGHT * (eight_bit_lightness(entry) - l_star) ** 2
        if entry not in out or cost < out[entry][0]:
            out[entry] = (cost, colour)
    return out


@cache
def scale(dark: bool, levels: int = LEVELS) -> tuple[Level, ...]:
    """The theme's levels, lowest weight first: the cheapest chain of candidates (dynamic programming over
    the levels) whose 256-colour entries step by at least MIN_STEP_256 in lightness, all one way."""
    low, high = LIGHTNESS[dark]
    sign = 1 if high > low else -1
    options = [_candidates(low + (high - low) * k / (levels - 1)) for k in range(levels)]
    # best[k][entry] = (the chain's total cost up to level k ending on entry, the entry before it)
    best: list[dict[int, tuple[float, int | None]]] = [{e: (cost, None) for e, (cost, _) in options[0].items()}]
    for k in range(1, levels):
        row: dict[int, tuple[float, int | None]] = {}
        for entry, (cost, _) in options[k].items():
            l_entry = eight_bit_lightness(entry)
            before = [(total, e) for e, (total, _) in best[-1].items()
                      if (l_entry - eight_bit_lightness(e)) * sign >= MIN_STEP_256]
            if before:
                total, e = min(before)
                row[entry] = (total + cost, e)
        best.append(row)
    if not best[-1]:
        raise ValueError(f"no {levels} colours from L* {low} to {high} keep distinct, ordered 256-colour entries")
    chain = [min(best[-1], key=lambda e: best[-1][e][0])]
    for k in range(levels - 1, 0, -1):
        previous = best[k][chain[-1]][1]
        assert previous is not None
        chain.append(previous)
    chain.reverse()
    return tuple(Level(options[k][entry][1], entry) for k, entry in enumerate(chain))


@cache
def palette(dark: bool) -> tuple[Color, ...]:
    """The colours alone (one tuple per theme: grids compare it by identity to know the theme changed)."""
    return tuple(lv.colour for lv in scale(dark))
