"""The grids' colour scale: even lightness steps, the strongest weight far from either theme's background,
and every level its own colour in a 256-colour terminal.

The screen test reads the Attention grid back from the app's SVG export in the light theme (after `t`):
the cell showing the largest weight must stand far from the screen's background, as in the dark theme.
The scale it replaced put its top colour at L* 91 on the light theme's 89, and 32 levels on 12 entries.
"""

from __future__ import annotations

import re

import pytest
from app_support import app_for, wait_for, wait_ready
from rich.color import Color
from screen_reader import read_svg
from textual.theme import BUILTIN_THEMES

from tui_lab.app.app import DARK, LIGHT
from tui_lab.app.widgets.colour_map import LEVELS, eight_bit, eight_bit_lightness, lightness, palette, scale
from tui_lab.app.widgets.heatmap import Heatmap

THEMES = {True: DARK, False: LIGHT}
TOP_CONTRAST = 60.0  # L* between the strongest weight and the background
LOW_CONTRAST = 10.0  # and between the weakest and the background: the grid's extent stays visible


def background_lightness(theme: str) -> float:
    return lightness(Color.parse(BUILTIN_THEMES[theme].to_color_system().generate()["background"]))


@pytest.mark.parametrize("dark", [True, False])
def test_levels_step_evenly_in_lightness(dark):
    ls = [lightness(c) for c in palette(dark)]
    steps = [b - a for a, b in zip(ls, ls[1:], strict=False)]
    assert len(ls) == LEVELS
    assert all(s > 0 for s in steps) if dark else all(s < 0 for s in steps), ls  # dark: up; light: down
    sizes = [abs(s) for s in steps]
    assert max(sizes) / min(sizes) < 1.25, sizes


@pytest.mark.parametrize("dark", [True, False])
def test_the_strongest_weight_stands_furthest_from_the_background(dark):
    bg = background_lightness(THEMES[dark])
    ls = [lightness(c) for c in palette(dark)]
    assert abs(ls[-1] - bg) >= TOP_CONTRAST, (ls[-1], bg)
    assert abs(ls[-1] - bg) == max(abs(x - bg) for x in ls)
    assert abs(ls[0] - bg) >= LOW_CONTRAST, (ls[0], bg)


@pytest.mark.parametrize("dark", [True, False])
def test_every_level_keeps_its_own_entry_in_a_256_colour_terminal(dark):
    levels = scale(dark)
    entries = [eight_bit(lv.colour) for lv in levels]
    assert entries == [lv.entry for lv in levels]
    assert len(set(entries)) == LEVELS, entries
    ls = [eight_bit_lightness(e) for e in entries]
    steps = [b - a for a, b in zip(ls, ls[1:], strict=False)]
    assert all(s >= 1.0 for s in steps) if dark else all(s <= -1.0 for s in steps), ls


def hottest_cell(screen) -> tuple[float, str]:
    """The largest weight written in a painted cell (`#` on) and that cell's background."""
    found = [(float(m.group()), screen.bg[y][m.start()]) for y in range(screen.height)
             for m in re.finditer(r"[01]\.\d\d", screen.line(y)) if screen.painted(y, m.start())]
    return max(found, default=(-1.0, ""))


async def test_the_hottest_cell_reads_in_the_light_theme():
    size = (100, 30)
    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=size) as pilot:
        app.show_view("attention")
        await wait_ready(pilot)
        view = app.view("attention")
        await wait_for(pilot, lambda: view.captured_generation >= 1 and view.grids)
        grid = app.query_one(Heatmap)
        grid.focus()
        await pilot.press("number_sign")
        for theme in (LIGHT, DARK):  # t and back: the cached lines follow the theme
            await pilot.press("t")
            await wait_for(pilot, lambda theme=theme: app.theme == theme)
            await pilot.pause()
            screen = read_svg(app.export_screenshot(), *size)
            weight, colour = hottest_cell(screen)
            assert weight > 0, screen.text()
            bg = lightness(Color.parse(screen.base))
            cell = lightness(Color.parse(colour))
            assert abs(cell - bg) >= TOP_CONTRAST, (theme, weight, colour, cell, screen.base, bg)
