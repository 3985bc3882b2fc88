"""Snapshot pictures (no tests here): the README's SVGs are the snapshots, and a stale one fails its test.

pytest-textual-snapshot 1.1.0 pins syrupy 4.8.0, which needs pytest < 9 (we run pytest 9), and it compares
whole SVGs, where timing makes every run differ. So the same idea, small: `check_picture` exports the app's
screen as SVG, reads it back into terminal cells (`screen_reader.read_svg`) and compares it with the picture
kept in docs/screenshots, both read the same way, after masking what a clock decides:

- timing numbers in the text (seconds, tokens/s, ETA, speedups, FLOP/s, MFU) become `#`, and the spaces of
  such a line are squeezed (a number's width varies);
- animations are off (`app.animation_level = "none"`), so a tab's underline is never caught mid-slide;
- whole widgets whose drawing is timing (a latency plot, a tokens/s panel) become `▒`, and a run of
  identical lines collapses to one, so a masked note one line taller or shorter still matches;
- colours count too: each line is compared with the runs of its cells' ink and background colours (a stale
  colour scale or theme fails like a stale word); on a line whose timing text was masked only the order of
  the runs counts, since the masked number's width moves the cells after it.

The rectangles masked are written into the SVG as a comment, so the kept picture is masked where it was.
`TUI_LAB_UPDATE_PICTURES=1` writes the pictures instead of checking them (see the README).
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path

from screen_reader import read_svg

ROOT = Path(__file__).resolve().parents[2]
PICTURES = ROOT / "docs" / "screenshots"
UPDATE = os.environ.get("TUI_LAB_UPDATE_PICTURES") == "1"
COMMAND = "TUI_LAB_UPDATE_PICTURES=1 python -m pytest tests/app/shell/test_readme_pictures.py"
_MARK = re.compile(r"<!-- tui-lab picture (\{.*?\}) -->")
NUM = r"\d[\d,]*(?:\.\d+)?"
TIMING = [
    re.compile(rf"(?:tokens/s|tok/s|MFU|ETA|measured|compute) ~?[+-]?{NUM}(?::\d\d)?(?: ?%)?"),  # name, value
    re.compile(rf"{NUM} ?(?:[kMG]?(?:tokens|tok)/s|[kMGT]?FLOP/s|ms|us|µs|s)(?![\w/])"),  # durations, rates
    re.compile(r"(?:\d\d|--):(?:\d\d|--):(?:\d\d|--)"),  # a progress bar's ETA
    re.compile(rf"{NUM}x(?![\w])"),  # a measured speedup ("0.68x"); "2 x 16" and "128x2" are sizes
]
MASK = "▒"


DECIMAL = re.compile(r"\d[\d,]*\.\d+")


def mask_text(line: str, decimals: bool = False) -> str:
    """Timing numbers as `#`; with `decimals`, every decimal number (a table of measured times)."""
    masked = line
    for pattern in TIMING + ([DECIMAL] if decimals else []):
        masked = pattern.sub("#", masked)
    # A measured number's width varies ("724.0", "1,234.5"): a masked line compares with its spaces squeezed.
    return masked if masked == line else re.sub(r" +", " ", masked)


def masked_lines(svg: str, width: int, height: int, rects: list[list[int]], decimals: bool = False) -> list[str]:
    """The screen's lines, timing text masked, the widgets' rectangles filled, repeated lines collapsed; each
    line followed by its colours (`line_colours`), so a stale colour fails as a stale word does."""
    screen = read_svg(svg, width, height)
    hidden = set()
    for x, y, w, h in rects:
        for row in range(y, min(y + h, height)):
            for col in range(x, min(x + w, width)):
                screen.chars[row][col] = MASK
                hidden.add((row, col))
    lines = []
    for y in range(height):
        text = mask_text(screen.line(y), decimals).rstrip()
        squeezed = text != screen.line(y).rstrip()  # a timing number masked: its width, so its cells, vary
        lines.append(f"{text}\n    colours: {line_colours(screen, y, hidden, squeezed)}")
    return [line for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]]


def line_colours(screen, y: int, hidden: set[tuple[int, int]], squeezed: bool) -> str:
    """The line's cells as runs of ink/background (ink only where a character is drawn; masked widgets as
    MASK). A line whose timing text was masked keeps the order of its runs, not their lengths."""
    cells = []
    for x, ch in enumerate(screen.chars[y]):
        if (y, x) in hidden:
            cells.append(MASK)
        else:
            cells.append(f"{screen.fg[y][x] if ch.strip() else '-'}/{screen.bg[y][x] or '-'}")
    runs: list[list] = []
    for cell in cells:
        if runs and runs[-1][0] == cell:
            runs[-1][1] += 1
        else:
            runs.append([cell, 1])
    return " ".join(cell if squeezed else f"{cell}x{n}" for cell, n in runs)


def _rects(app, selectors: tuple[str, ...]) -> list[list[int]]:
    rects = []
    for selector in selectors:
        for widget in app.query(selector):
            if widget.display and widget.region.area:
                r = widget.region
                rects.append([r.x, r.y, r.width, r.height])
    return rects


async def settle(pilot) -> None:
    """Animations off, and whatever was scheduled drawn: the screen a person sees once it stops moving."""
    pilot.app.animation_level = "none"
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def check_picture(app, name: str, masked: tuple[str, ...] = (), decimals: bool = False) -> str:
    """Export the screen as `name`.svg and compare it with the kept picture (or keep it when updating).

    `masked`: CSS selectors of the widgets whose drawing is timing; `decimals`: every decimal number on the
    screen is a measurement (the Speed view's table). Returns the screen's plain text."""
    app.clear_notifications()  # a toast comes and goes with the clock
    svg = app.export_screenshot(title=f"tui-lab: {name}")
    width, height = app.size
    rects = _rects(app, masked)
    live = masked_lines(svg, width, height, rects, decimals)
    path = PICTURES / f"{name}.svg"
    if UPDATE:
        PICTURES.mkdir(parents=True, exist_ok=True)
        mark = json.dumps({"width": width, "height": height, "masked": rects, "decimals": decimals})
        path.write_text(f"{svg}\n<!-- tui-lab picture {mark} -->\n")
        return "\n".join(read_svg(svg, width, height).line(y) for y in range(height))
    assert path.exists(), f"{path.name} is missing: write the README's pictures with `{COMMAND}`"
    kept = path.read_text()
    found = _MARK.search(kept)
    assert found, f"{path.name} was not written by the snapshot tests: rewrite it with `{COMMAND}`"
    mark = json.loads(found.group(1))
    old = masked_lines(kept, mark["width"], mark["height"], mark["masked"], mark.get("decimals", False))
    if old != live:
        diff = "\n".join(difflib.unified_diff(old, live, "kept picture", "the app now", lineterm=""))
        raise AssertionError(f"the README's picture {path.name} is stale; if the new screen is right, "
                             f"rewrite the pictures with `{COMMAND}`\n{diff}")
    return "\n".join(read_svg(svg, width, height).line(y) for y in range(height))


# Pictures a long run draws (minutes), kept by hand, not snapshots: each names the test that writes it.
HAND_KEPT = {"experiments-efficient-attention": "TUI_LAB_SCREENSHOTS=docs/screenshots python -m pytest "
                                                "tests/app/experiments/test_app_experiments_efficient.py"}


def keep(app, name: str) -> str:
    """A hand-kept picture: written to $TUI_LAB_SCREENSHOTS when set; the screen's text either way."""
    import html

    svg = app.export_screenshot(title=f"tui-lab: {name}")
    folder = os.environ.get("TUI_LAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.svg").write_text(svg)
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


def readme_pictures() -> set[str]:
    """The names of the pictures the README shows (docs/screenshots/NAME.svg)."""
    text = (ROOT / "README.md").read_text()
    return set(re.findall(r"docs/screenshots/([\w-]+)\.svg", text))
