"""The rules a screen keeps at any size (no tests here): read from the screen's text, as a person reads it.

- A number is whole or absent: no run of digits touches "…" or a pane's right edge (a border, a scrollbar,
  the screen's last column), where it may have been cut.
- A word is never split: each named word is on one line, whole, or ends in "…", never "encoder-de" over
  "coder".
- Nothing overlaps: no two widgets side by side in one container share a cell.
- Every footer keeps `q quit` and the view's own keys; a plot has at least 8 rows to draw in.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
# What ends a pane on the right: box and panel borders, Textual's scrollbars and half blocks.
EDGES = set("│┃║▕▏▎▍▌▋▊▉█▐") | {chr(c) for c in range(0x2580, 0x25A0)}
_DIGIT_CUT = re.compile(rf"\d{ELLIPSIS}|{ELLIPSIS}\d")
MIN_PLOT_ROWS = 8


def cut_numbers(lines: list[str], width: int) -> list[str]:
    """Lines where a run of digits touches an ellipsis or the right edge of its pane (or of the screen,
    `width` columns: a terminal's capture drops trailing blanks)."""
    found = []
    for y, line in enumerate(lines):
        line = line.ljust(width)
        if _DIGIT_CUT.search(line):
            found.append(f"line {y}: digits touch '{ELLIPSIS}': {line.rstrip()!r}")
        for x, ch in enumerate(line):
            if not ch.isdigit():
                continue
            after = line[x + 1] if x + 1 < width else None
            if after is None or after in EDGES:
                found.append(f"line {y}: digits touch the pane's edge at column {x}: {line.rstrip()!r}")
                break
    return found


def _segments(line: str) -> list[tuple[int, int]]:
    """The column spans between pane edges on one line."""
    spans, start = [], 0
    for x, ch in enumerate(line + "│"):
        if ch in EDGES or ch == "│":
            if x > start:
                spans.append((start, x))
            start = x + 1
    return spans


def split_words(lines: list[str], words: list[str]) -> list[str]:
    """Named words broken over two lines: a head ending one line's pane, the rest starting the next line's."""
    found = []
    for word in words:
        for y in range(len(lines) - 1):
            for start, end in _segments(lines[y]):
                head = lines[y][start:end].rstrip()
                for k in range(2, len(word)):
                    if not head.endswith(word[:k]) or len(head) < end - start - 1:
                        continue  # the head must fill its pane to the edge, as a fold does
                    below = lines[y + 1][start:end].strip()
                    if below.startswith(word[k:]):
                        found.append(f"'{word}' split over lines {y}-{y + 1}: {head[-k:]!r} / {word[k:]!r}")
    return found


def missing_words(lines: list[str], words: list[str]) -> list[str]:
    """Named words not on the screen whole (an ellipsis-cut prefix counts as whole: it says it was cut)."""
    text = "\n".join(lines)
    missing = []
    for word in words:
        if word in text:
            continue
        if any(f"{word[:k]}{ELLIPSIS}" in text for k in range(1, len(word))):
            continue
        missing.append(word)
    return missing


def footer_problems(footer: str, keys: list[str]) -> list[str]:
    """The footer must keep `q quit` and the view's own keys ("g start")."""
    return [f"footer lacks {key!r}: {footer.rstrip()!r}" for key in ["q quit", *keys] if key not in footer]


def overlaps(app) -> list[str]:
    """Widgets side by side in one container whose regions share a cell."""
    found = []
    for parent in app.screen.walk_children():
        shown = [w for w in parent.children if w.display and w.visible and w.region.area]
        for i, a in enumerate(shown):
            for b in shown[i + 1:]:
                if a.region.overlaps(b.region):
                    found.append(f"{_name(a)} overlaps {_name(b)} inside {_name(parent)}")
    return found


def _name(widget) -> str:
    return f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__


def plot_rows(app, lines: list[str]) -> list[str]:
    """Each plot on screen has at least 8 rows of canvas: the lines between its frame's top and bottom."""
    from tui_lab.app.widgets.line_plot import LinePlot

    found = []
    for plot in app.screen.query(LinePlot):
        r = plot.region
        if not (plot.display and r.area) or r.bottom > len(lines):
            continue  # hidden, or scrolled partly out of view: checked where it shows whole
        inside = [lines[y][r.x:r.right] for y in range(r.y, r.bottom)]
        tops = [i for i, text in enumerate(inside) if "┌" in text]
        bottoms = [i for i, text in enumerate(inside) if "└" in text]
        rows = bottoms[-1] - tops[0] - 1 if tops and bottoms else r.height - 5  # title, frame, ticks, name
        if rows < MIN_PLOT_ROWS:
            found.append(f"{_name(plot)} has {rows} rows to draw in (at least {MIN_PLOT_ROWS})")
    return found
