"""Read a Textual SVG export back into terminal cells (no tests here), and find a grid in it.

What a person sees is the SVG: characters at cell positions and background rectangles. Tests locate a
grid's column labels and row labels in that text and check the colours under them, never the widget's
fields. Rich writes a cell at x = column * 12.2 (20 px font, aspect 0.61) and a line at y = line * 24.4.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cached_property

from rich.cells import cell_len

CHAR_W, LINE_H = 20 * 0.61, 20 * 1.22
ELLIPSIS = "…"
GLYPHS = "▀▄╱["  # the grid's own characters: half blocks, the masked hatch, the cursor
_RECT = re.compile(r'<rect fill="(#[0-9a-fA-F]{6})" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"')
_TEXT = re.compile(r'<text class="[\w-]+-(r\d+)" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                   r'clip-path="url\(#[\w-]+-line-(\d+)\)">([^<]*)</text>')
_CLASS = re.compile(r"\.[\w-]+-(r\d+) \{ fill: (#[0-9a-fA-F]{6})")


@dataclass
class Screen:
    chars: list[list[str]]
    bg: list[list[str | None]]
    fg: list[list[str | None]]

    @property
    def height(self) -> int:
        return len(self.chars)

    @cached_property
    def base(self) -> str | None:
        """The most common background: the screen's own, behind text and blanks."""
        counts: dict[str | None, int] = {}
        for row in self.bg:
            for colour in row:
                counts[colour] = counts.get(colour, 0) + 1
        return max(counts, key=counts.__getitem__)

    def painted(self, y: int, x: int) -> bool:
        """A cell with a background of its own (a grid colour, not the screen's)."""
        return self.bg[y][x] not in (None, self.base)

    def line(self, y: int) -> str:
        return "".join(self.chars[y])

    def text(self) -> str:
        return "\n".join(self.line(y) for y in range(self.height))


def read_svg(svg: str, width: int, height: int) -> Screen:
    chars = [[" "] * width for _ in range(height)]
    bg: list[list[str | None]] = [[None] * width for _ in range(height)]
    fg: list[list[str | None]] = [[None] * width for _ in range(height)]
    for colour, x, y, w in _RECT.findall(svg):
        row, col, n = round((float(y) - 1.5) / LINE_H), round(float(x) / CHAR_W), round(float(w) / CHAR_W)
        for c in range(col, min(col + n, width)):
            bg[row][c] = colour.lower()
    fills = {name: colour.lower() for name, colour in _CLASS.findall(svg)}
    for cls, x, line, text in _TEXT.findall(svg):
        row, col = int(line), round(float(x) / CHAR_W)
        for ch in html.unescape(text).replace("\xa0", " "):
            if col < width:
                chars[row][col], fg[row][col] = ch, fills.get(cls)
                if cell_len(ch) == 2 and col + 1 < width:
                    chars[row][col + 1] = ""
            col += cell_len(ch)
    return Screen(chars, bg, fg)


def shows(label: str, seen: str) -> bool:
    """`seen` is the whole label, or a prefix of it ended by an ellipsis (never cut silently)."""
    seen = seen.rstrip()
    if seen == label:
        return True
    return seen.endswith(ELLIPSIS) and label.startswith(seen[:-1]) and len(seen[:-1]) < len(label)


@dataclass
class Columns:
    y: int  # the first header line
    x0: int  # where column 0's slot starts
    slot: int  # characters per column, labels and cells alike
    vertical: bool


def _horizontal(screen: Screen, labels: list[str], y: int, x0: int, slot: int) -> bool:
    row = screen.chars[y]
    for j, label in enumerate(labels):
        start = x0 + j * slot
        if start > 0 and row[start - 1].strip():
            return False  # the label must start its slot, not continue a word
        if not shows(label, "".join(row[start:start + slot])):
            return False
    return True


def _vertical(screen: Screen, labels: list[str], y: int, x0: int, slot: int) -> bool:
    for j, label in enumerate(labels):
        x = x0 + j * slot
        text = ""
        for yy in range(y, screen.height):
            ch = screen.chars[yy][x]
            if not ch.strip() or ch in GLYPHS:
                break  # the labels end where the grid's cells begin
            text += ch
        if not shows(label, text) or any(screen.chars[y][x + k].strip() for k in range(1, slot)):
            return False
    return True


def find_columns(screen: Screen, labels: list[str], top: int = 0, max_slot: int = 16) -> Columns | None:
    """The first place where every label appears in order, one per fixed-width slot; else numbered columns."""
    width = len(screen.chars[0])
    for y in range(top, screen.height):
        for slot in range(1, max_slot + 1):
            for x0 in range(0, width - slot * len(labels) + 1):
                if slot >= 2 and _horizontal(screen, labels, y, x0, slot):
                    return Columns(y, x0, slot, False)
                if _vertical(screen, labels, y, x0, slot):
                    return Columns(y, x0, slot, True)
    return find_numbered_columns(screen, labels, top)


_KEY_ENTRY = re.compile(r"(\d+) (\S+)")


def find_numbered_columns(screen: Screen, labels: list[str], top: int = 0) -> Columns | None:
    """A grid whose one-character columns are numbered: a ruler ("0    5    10") with each fifth number over its
    column, then key lines "0 In  1 ␣the ..." naming the columns in order (at least three, or all; a key cut
    short ends in an ellipsis). Columns.y is then the key's last line, so the grid's rows start below it."""
    for y in range(top, screen.height - 1):
        line = screen.line(y)
        for m in re.finditer(r"(?<!\S)0(?= {4}5\b| *[│]| *$)", line):
            x0 = m.start()
            right = line.find("│", x0) if "│" in line[x0:] else len(line)
            left = line.rfind("│", 0, x0) + 1
            if not all(line[x0 + j:right].startswith(str(j)) for j in range(0, min(len(labels), right - x0 - 2), 5)):
                continue
            entries, yy = [], y + 1
            while yy < screen.height:
                key = screen.line(yy)  # the key spans its box, which may be wider than the ruler's grid
                end = key.find("│", left)
                found = _KEY_ENTRY.findall(key[left:end if end >= 0 else len(key)])
                if not found or int(found[0][0]) != len(entries):
                    break
                entries, yy = entries + found, yy + 1
            named = all(j < len(labels) and int(n) == j and shows(labels[j], text)
                        for j, (n, text) in enumerate(entries))
            if named and len(entries) >= min(len(labels), 3):
                return Columns(yy - 1, x0, 1, False)
    return None


def _gutter(screen: Screen, y: int, x0: int) -> str:
    """The row label left of the grid: the text after the last box border within 14 characters."""
    return "".join(screen.chars[y][max(0, x0 - 14):x0]).split("│")[-1].strip()


def find_rows(screen: Screen, labels: list[str], x0: int, top: int) -> list[int]:
    """The line of each row label in the gutter left of `x0`, in order below `top` (-1 when missing)."""
    found, y = [], top
    for label in labels:
        while y < screen.height and not shows(label, _gutter(screen, y, x0)):
            y += 1
        found.append(y if y < screen.height else -1)
        y += 1
    return found


def slot_colours(screen: Screen, y: int, cols: Columns, n: int) -> list[set[str | None]]:
    """The set of background colours inside each column's slot on line `y` (one colour each when aligned)."""
    return [{screen.bg[y][x] for x in range(cols.x0 + j * cols.slot, cols.x0 + (j + 1) * cols.slot)}
            for j in range(n)]
