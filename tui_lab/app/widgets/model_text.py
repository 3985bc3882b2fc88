"""Text a model wrote, made safe to draw in a box: a random or byte-level model samples any character.

A zero-width character (a combining mark) with no letter before it (at the start of a line, or after a space)
has no cell of its own: the terminal puts it on the cell to its left, which in a box is the border (the
crawler's long tier saw the beam column's text start over its `│`). Control characters other than a newline
move the cursor or draw nothing. So a lone mark is drawn on a dotted circle, as type specimens show one, and
controls as their escapes.

In a box, `ModelText` draws such text folded to the box's width (`fold`): one cell short of the border, so no
glyph touches it, and a run with no space wider than a line folds between its atoms with a mark (FOLD).
"""

from __future__ import annotations

import re
import unicodedata

from rich.cells import cell_len
from textual.content import Content
from textual.css.styles import RulesMap
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Static


def drawable(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch == "\n":
            out.append(ch)
        elif ch == "\t":
            out.append("    ")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        elif cell_len(ch) == 0:  # a mark (rich's width, as it lays the box out): it draws on the cell before
            if not out or out[-1][-1:] in ("\n", " ", ""):
                out.append("◌")
            out.append(ch)
        else:
            out.append(ch)
    return "".join(out)


# --- folding: the compare and side-by-side boxes ------------------------------------------------------------------
# A box's text wraps at spaces one cell short of its border, so no glyph touches the border (a digit there reads as
# a number the border cut). A run with no space wider than that (a random model's sampled characters) folds between
# its atoms (an escape like \x19, a run of digits, a character with its marks), never inside one that fits a line,
# and each fold ends in FOLD: the run goes on below, nothing of it hidden.
FOLD = "↵"
_ATOM = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[a-z\\])|[0-9]+|.", re.DOTALL)


def _atoms(word: str) -> list[tuple[int, int]]:
    """`word`'s unbreakable pieces as (start, end) offsets: an escape (\\x19), a run of digits, a character."""
    spans: list[tuple[int, int]] = []
    for match in _ATOM.finditer(word):
        start, end = match.span()
        # a mark stays on its character; digits after an escape's ("\x132") are not cut from it either
        if spans and (cell_len(word[start:end]) == 0 or word[start].isdigit() and word[start - 1].isdigit()):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _graphemes(word: str, start: int, end: int) -> list[tuple[int, int]]:
    """An atom too wide for a line, cut into characters (each with its marks)."""
    spans: list[tuple[int, int]] = []
    for i in range(start, end):
        if spans and cell_len(word[i]) == 0:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def fold_line(line: str, width: int) -> list[tuple[int, int, bool]]:
    """Where one line of text breaks in a box `width` cells wide: (start, end, folded) per screen line, each at
    most `width - 1` cells (`folded`: the line ends inside a run with no space, and FOLD goes after it)."""
    room = max(1, width - 1)
    out: list[tuple[int, int, bool]] = []
    start = end = used = 0  # the screen line being filled: line[start:end], `used` cells

    def newline(at: int, folded: bool, last: bool = False) -> None:
        nonlocal start, end, used
        if folded:
            out.append((start, end, True))
        elif _trim(line, start, end) > start or last and not out:  # (leading spaces alone make no line)
            out.append((start, _trim(line, start, end), False))
        start = end = at
        used = 0

    for match in re.finditer(r"[^ ]+| +", line):
        a, b = match.span()
        if line[a] == " ":  # spaces between words (or leading the text) are kept; at a break they go
            if used + (b - a) > room:
                if end > start:
                    newline(b, False)
                else:
                    start = end = b
            elif end > start or not out:
                end, used = b, used + b - a
            else:
                start = end = b
            continue
        w = cell_len(line[a:b])
        if used + w <= room:  # the word fits where it is
            end, used = b, used + w
            continue
        if w <= room or room - used < 2:  # it goes on the next line (a run wider than a line starts here)
            if end > start:
                newline(a, False)
            else:
                start = end = a
            if w <= room:
                end, used = b, w
                continue
        # a run wider than a line: folded between its atoms, an atom wider than a line between its characters
        piece = line[a:b]
        for s, e in _atoms(piece):
            for gs, ge in [(s, e)] if cell_len(piece[s:e]) <= room else _graphemes(piece, s, e):
                cells = cell_len(piece[gs:ge])
                if used + cells > room and used > 0:
                    newline(a + gs, end > a)  # a fold inside the run is marked; a break before it is a wrap
                end, used = a + ge, used + cells
    newline(len(line), False, last=True)
    return out


def _trim(line: str, start: int, end: int) -> int:
    while end > start and line[end - 1] == " ":
        end -= 1
    return end


def fold(content: Content, width: int) -> Content:
    """`content` broken into lines for a box `width` cells wide (`fold_line`), its styles kept."""
    lines = []
    for line in content.split("\n", allow_blank=True):
        for start, end, folded in fold_line(line.plain, width):
            lines.append(line[start:end] + Content.styled(FOLD, "dim") if folded else line[start:end])
    return Content("\n").join(lines)


class Folded(Visual):
    """A Content drawn folded to the width it is given (`fold`); `plain` is the text as given."""

    def __init__(self, content: Content) -> None:
        self.content = content
        self._folded: tuple[int, Content] | None = None

    @property
    def plain(self) -> str:
        return self.content.plain

    def __str__(self) -> str:
        return self.content.plain

    def at(self, width: int) -> Content:
        if self._folded is None or self._folded[0] != width:
            self._folded = (width, fold(self.content, width))
        return self._folded[1]

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self.at(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.content.get_optimal_width(rules, container_width) + 1  # the cell kept clear of the border

    def get_minimal_width(self, rules: RulesMap) -> int:
        return 2

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.at(width).get_height(rules, width)


class ModelText(Static):
    """A Static for text a model wrote, folded (`Folded`): no glyph touches the box's border, a run with no space
    folds with a mark. Selecting copies the text without the folds' marks."""

    def render(self) -> Visual:
        visual = self.visual
        return Folded(visual) if isinstance(visual, Content) else visual

    def render_line(self, y: int) -> Strip:
        # Textual draws a row from the lines rendered last, again only once the widget is marked dirty; a render
        # made at an old height (the result in, its layout not yet) and a layout that grows the box without
        # marking it leave the new rows blank (the long tier's translator 80x24 walk at d10fea8, seed 839854392:
        # the side by side's live box drew its text and a blank row for "6 decoder passes, 6.0 ms").
        if self._render_cache.size != self.size:
            self._render_content()
        return super().render_line(y)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        visual = self._render()
        if not isinstance(visual, Folded):
            return super().get_selection(selection)
        # the selection's offsets are in the lines drawn, the text folded to this width
        return selection.extract(visual.at(self.content_size.width).plain).replace(f"{FOLD}\n", ""), "\n"
