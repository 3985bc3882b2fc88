"""The lines of the grid widget (heatmap.py) that stay put while its cells scroll: the column labels or the
numbered columns' ruler and key above the cells, and the read-out of the cursor's cell below them. Pure drawing
from a `grid_layout.Layout` and the labels: the widget keeps the data, the cursor and the scrolling."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.segment import Segment
from textual.strip import Strip

from tui_lab.app.widgets.cut import keep_cells
from tui_lab.app.widgets.grid_cells import EMPTY, MARK
from tui_lab.app.widgets.grid_layout import KEY_GAP, Layout, fit_label, key_lines, ruler, tick_line, vertical_label

_INDEX = re.compile(r"^\[\d+\] ")  # "[3] 'two'": a label's index in the read-out


def header_line(lay: Layout, col_labels: list[str], cursor_col: int, y: int) -> Strip:
    """Column labels: across each slot, or downwards one character per line, or the ruler of numbered
    columns; the cursor's is marked."""
    segments = []
    if lay.numbered:
        text, col = ruler(lay.cols), cursor_col
        return Strip([Segment(text[:col]), Segment(text[col], MARK), Segment(text[col + 1:])], lay.grid_width)
    ticks = tick_line(col_labels, lay.ticks, lay.cell_w) if lay.ticks else ""
    for col, label in enumerate(col_labels):
        if lay.ticks:
            text = ticks[col * lay.cell_w:(col + 1) * lay.cell_w]
        elif lay.vertical:
            text = vertical_label(label, lay.header)[y] + " " * (lay.cell_w - 1)
        else:
            text = fit_label(label, lay.cell_w - 1, align="left") + " "
        segments.append(Segment(text, MARK if col == cursor_col else EMPTY))
    return Strip(segments, lay.grid_width)


def window(line: Strip, start: int, width: int, words: bool) -> Strip:
    """`width` cells of a header or grid line from `start`. With `words` (ticks or a ruler written across), a
    label the window's sides would cut is left out whole: "1,5" is never shown as "1," nor "120" as "12"."""
    cropped = line.crop(start, start + width)
    if not words:
        return cropped
    text = "".join(segment.text for segment in line)
    keep = [True] * len(text)
    if 0 < start < len(text) and text[start - 1] != " ":
        for x in range(start, len(text)):
            if text[x] == " ":
                break
            keep[x] = False
    end = start + width
    if 0 < end < len(text) and text[end] != " ":
        for x in range(end - 1, start - 1, -1):
            if text[x] == " ":
                break
            keep[x] = False
    chars = [Segment(ch if keep[x] else " ", segment.style) for x, (ch, segment) in
             enumerate((ch, segment) for segment in line for ch in segment.text)]
    return Strip(chars).crop(start, start + width).simplify()


def key_line(col_labels: list[str], width: int, room: int, cursor_col: int, i: int) -> Strip:
    """Line `i` of the numbered columns' key; the cursor's entry is marked, and a key cut short says so."""
    lines = key_lines(col_labels, width)
    entries = lines[i] if i < len(lines) else []
    more = i == room - 1 and len(lines) > room  # the entries left out: the read-out names the cursor's
    while more and entries and sum(cell_len(e) + len(KEY_GAP) for _, e in entries) + 1 > width:
        entries = entries[:-1]
    segments: list[Segment] = []
    for j, entry in entries:
        segments += [Segment(KEY_GAP if segments else ""), Segment(entry, MARK if j == cursor_col else EMPTY)]
    return Strip([*segments, *([Segment(KEY_GAP + "…")] if more else [])])


def row_label(label: str, gutter: int, marked: bool) -> Strip:
    """A row's label right-aligned in the gutter (marked on the cursor's row), then one space."""
    return Strip([Segment(fit_label(label, gutter - 1), MARK if marked else EMPTY), Segment(" ")])


def readout_line(folded: list[Segment], description: str, width: int) -> Strip:
    """The read-out under the grid (after the legend, when a short box folds it in), `width` cells: cut at a
    space and saying so, never inside a number."""
    readout = Strip([*folded, Segment(description)])
    if readout.cell_length > width:
        keep, tail = keep_cells(readout.text, width)
        readout = Strip.join([readout.crop(0, cell_len(readout.text[:keep])), Strip([Segment(tail)])])
    return readout.crop_extend(0, width, None)


def describe_cell(axes: tuple[str, str], row: str, col: str, value: str, note: str, width: int | None) -> str:
    """A cell of the grid in words: in full, or, when `width` cells are too few, shorter forms that keep the
    value whole: the spacing, then the axis names give way, then the row note (what the row says, e.g.
    "1 of 2 heads stop; decoder input 'ein' predicts it") is cut after whole words, then dropped. A form that ends
    in the value keeps the last cell free: its last digit against the pane's edge reads as a number cut short
    (issue 36's crawler: the Train view's alignment grid at 160x48), so below the bare form the labels lose their
    indices (the grid marks the cursor's row and column), then only the value is left."""
    q, k = axes
    note = f"  ({note})" if note else ""
    named, bare = f"{q} {row} -> {k} {col}: {value}", f"{row} -> {col}: {value}"
    plain = f"{_INDEX.sub('', row)} -> {_INDEX.sub('', col)}: {value}"
    whole = (f"{q} {row}  ->  {k} {col}:  {value}{note}", named + note, bare + note)
    cut_note = (named + note, bare + note) if note else ()  # the renderer cuts the note, " …" after the value

    def fits(text: str, extra: int = 0) -> bool:
        gap = 1 if not extra and text[-1:].isdigit() else 0
        return width is None or cell_len(text) + extra + gap <= width

    return next((form for form in whole if fits(form)), None) or \
        next((form for form in cut_note if fits(form[:len(form) - len(note)], 2)), None) or \
        next((form for form in (named, bare, plain, value) if fits(form)), value)
