"""Where a grid's pieces go on screen: one fixed-width slot per column for its label and its cells.

Pure arithmetic (no Textual), so the rule the eye relies on is written once: column j's label and
column j's cells start at `gutter + j * cell_w` and are `cell_w` characters wide, in both densities.
Labels that do not fit their slot end in an ellipsis; narrow slots write labels downwards, except numbers
(positions, dimensions), which are written across as ticks every few columns ("10" downwards reads as "1"
over "0"), and labels of one-character columns too long for the lines downwards (a ViT's "[CLS]", "0,0" ...
"13,13"), written across the same way; and, for a grid that asks for `numbered` columns (Generate's long
context), a ruler line with every RULER_EVERY-th position above its column, and key lines under it that map
each number to its label.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

from tui_lab.app.widgets.cut import NUMBER

ELLIPSIS = "…"
GUTTER_MAX = 12  # row labels longer than this end in an ellipsis
HEADER_MAX = 6  # lines of vertical column labels at most
CELL_W_MAX = 12  # a small grid widens its cells up to this to use a large terminal...
CELL_H_MAX = 4  # ...and gives each row up to this many lines
NUMBER_W = 5  # "0.43" plus a gap: the narrowest cell that shows its weight
HORIZONTAL_W = 4  # slots this wide write their labels across (3 characters and a gap), else downwards
RULER_EVERY = 5  # numbered columns: the ruler writes every fifth position
KEY_GAP = "  "  # between two entries of the key ("0 In  1 ␣the  2 ␣morning")
LEGEND_LINES, READOUT_LINES = 1, 1  # fixed lines above and below the grid
FOLD_BELOW = 8  # a box shorter than this shares one line between the legend and the read-out


def printable(text: str) -> str:
    """Control characters (a byte-fallback token, a newline) as escapes, so a label never draws as \ufffd."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def fit_label(text: str, width: int, align: str = "right") -> str:
    """Exactly `width` cells: the text, or its start ended by an ellipsis (CJK characters take two)."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        out, used = "", 0
        for ch in text:
            if used + cell_len(ch) > width - 1:
                break
            out, used = out + ch, used + cell_len(ch)
        while out and out[-1] in NUMBER:
            out = out[:-1]  # no digit beside the mark: "3757415741…" read as a number cut short; the readout names it
        text = out + ELLIPSIS
    pad = " " * (width - cell_len(text))
    return pad + text if align == "right" else text + pad


def vertical_label(text: str, lines: int) -> list[str]:
    """One character per line (width 1 each); a label longer than `lines` ends in an ellipsis."""
    chars = [ch if cell_len(ch) == 1 else ELLIPSIS for ch in text]
    if len(chars) > lines:
        chars = chars[:lines - 1] + [ELLIPSIS]
    return chars + [" "] * (lines - len(chars))


def ruler(cols: int) -> str:
    """One character per column: every RULER_EVERY-th position's number starts above its column."""
    line = [" "] * cols
    for j in range(0, cols, RULER_EVERY):
        for k, ch in enumerate(str(j)):
            if j + k < cols:
                line[j + k] = ch
    return "".join(line)


def key_entry(j: int, label: str, width: int) -> str:
    """"7 ␣walked": column j's number and label, cut with an ellipsis to `width` at most."""
    entry = f"{j} {label}"
    return fit_label(entry, min(cell_len(entry), max(1, width)), align="left")


def key_lines(labels: list[str], width: int) -> list[list[tuple[int, str]]]:
    """The key, wrapped to `width` without splitting an entry: each line's (column, entry) pairs. No entry ends
    on the last column: against a scrollbar or a border it read as cut ("4 \\x01▅▅", the crawler's number rule)."""
    lines: list[list[tuple[int, str]]] = [[]]
    used = 0
    width = width - 1 if width > 8 else width
    for j, label in enumerate(labels):
        entry = key_entry(j, label, width)
        if lines[-1] and used + len(KEY_GAP) + cell_len(entry) > width:
            lines.append([])
            used = 0
        used += (len(KEY_GAP) if lines[-1] else 0) + cell_len(entry)
        lines[-1].append((j, entry))
    return lines if lines[-1] else []


@dataclass(frozen=True)
class Layout:
    """The geometry of one grid in a box of `width` x `height` characters."""

    rows: int
    cols: int
    gutter: int  # row labels plus one space
    cell_w: int  # the slot: label and cells of one column
    cell_h: int  # terminal lines per matrix row (full mode); dense mode packs two rows per line
    dense: bool
    header: int  # lines of column labels
    vertical: bool  # labels written downwards
    legend_lines: int = LEGEND_LINES  # 0: the legend starts the read-out line instead (a short box)
    numbered: bool = False  # header: a ruler line, then `header - 1` key lines (instead of vertical labels)
    ticks: int = 0  # numeric labels in narrow slots: every `ticks`-th column's, written across (0: not ticks)

    @property
    def rows_per_line(self) -> int:
        return 2 if self.dense else 1

    @property
    def grid_lines(self) -> int:
        if self.dense:
            return (self.rows + 1) // 2
        return self.rows * self.cell_h

    @property
    def top(self) -> int:
        """Lines above the grid: the legend, then the column labels."""
        return self.legend_lines + self.header

    @property
    def grid_width(self) -> int:
        return self.cols * self.cell_w

    def row_of_line(self, line: int) -> int:
        """The matrix row a grid line draws (the upper one in dense mode)."""
        return line * 2 if self.dense else line // self.cell_h

    def label_line(self, row: int) -> int:
        """The grid line that carries row `row`'s label: the middle line of a tall row."""
        return row // 2 if self.dense else row * self.cell_h + (self.cell_h - 1) // 2

    def scroll_showing(self, row: int, col: int, scroll: tuple[int, int], lines: int, room: int) -> tuple[int, int]:
        """The least scroll from `scroll` (x, y) that shows cell (row, col) in a view of `lines` grid lines and
        `room` characters of cells. Sideways the view starts on a column's start (never "15" for "c15", nor half
        a cell): the least whole columns that show this one, or this one first when the room is narrower."""
        sx, sy = scroll
        line, x0 = self.label_line(row), col * self.cell_w
        y = line - lines + 1 if line >= sy + lines else min(sy, line)
        skip = -(-(x0 + self.cell_w - room) // self.cell_w) * self.cell_w
        x = min(x0, skip) if x0 + self.cell_w > sx + room else min(sx, x0)
        return x, y


TICK_STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def tick_step(labels: list[str], cell_w: int) -> int:
    """Every how many columns a numeric label fits written across, with a space after it; 0 if the labels are
    not all whole numbers (words keep their vertical labels)."""
    if not labels or not all(label.isdigit() for label in labels):
        return 0
    need = max(len(label) for label in labels) + 1
    return next((step for step in TICK_STEPS if step * cell_w >= need), TICK_STEPS[-1])


def across_step(labels: list[str], cell_w: int, lines: int) -> int:
    """One-character columns whose labels downwards would be cut to `lines` characters ("0,10" over four lines
    ends "…", and a line of them read "0123456789…………" as a cut number): every how many columns a label fits
    written across instead, with a space after it; 0 when they fit downwards or a label has a wide character."""
    longest = max((len(label) for label in labels), default=0)
    if cell_w != 1 or longest <= lines or any(cell_len(label) != len(label) for label in labels):
        return 0
    return next((step for step in TICK_STEPS if step * cell_w >= longest + 1), TICK_STEPS[-1])


def tick_line(labels: list[str], step: int, cell_w: int) -> str:
    """The header line of numeric ticks: every `step`-th label written across from its column's slot."""
    line = [" "] * (len(labels) * cell_w)
    for col in range(0, len(labels), step):
        label = labels[col]
        start = col * cell_w
        if start + len(label) <= len(line):  # a last tick with no room is left out, never cut
            line[start:start + len(label)] = label
    return "".join(line)


def layout(rows: int, cols: int, row_labels: list[str], col_labels: list[str], width: int, height: int,
           dense: bool, numbers: bool, numbered: bool = False, key_width: int | None = None) -> Layout:
    """With `numbered`, columns too narrow for their labels across are numbered (a ruler and a key), not
    written downwards, and the cells may be one character wide in full mode too (one line per row)."""
    gutter = min(GUTTER_MAX, max((cell_len(s) for s in row_labels), default=0)) + 1
    room_w = max(0, width - gutter)
    least = 1 if dense or numbered and not numbers else (NUMBER_W if numbers else 2)
    cell_w = max(least, min(CELL_W_MAX, room_w // max(1, cols)))
    vertical = cell_w < HORIZONTAL_W
    numbered = numbered and vertical
    ticks = tick_step(col_labels, cell_w) if vertical and not numbered else 0
    if numbered:
        room = max(1, height // 5) if height else HEADER_MAX - 1
        key = key_lines(col_labels, width if key_width is None else key_width)
        header = 1 + max(1, min(HEADER_MAX - 1, len(key), room))
        vertical = False
    elif ticks:
        vertical, header = False, 1
    elif vertical:
        longest = max((len(s) for s in col_labels), default=1)
        room = max(2, height // 5) if height else HEADER_MAX
        header = max(1, min(HEADER_MAX, longest, room))
        ticks = across_step(col_labels, cell_w, header)
        if ticks:
            vertical, header = False, 1
    else:
        header = 1
    legend_lines = 0 if 0 < height < FOLD_BELOW else LEGEND_LINES
    cell_h = 1
    if not dense and height:
        room_h = height - legend_lines - header - READOUT_LINES
        cell_h = max(1, min(CELL_H_MAX, max(1, cell_w // 3), room_h // max(1, rows)))
    return Layout(rows, cols, gutter, cell_w, cell_h, dense, header, vertical, legend_lines, numbered, ticks)
