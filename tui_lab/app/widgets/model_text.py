"""Text a model wrote, made safe to draw in a box: a random or byte-level model samples any character.

A zero-width character (a combining mark) with no letter before it (at the start of a line, or after a space)
has no cell of its own: the terminal puts it on the cell to its left, which in a box is the border (the
crawler's long tier saw the beam column's text start over its `│`). Control characters other than a newline
move the cursor or draw nothing. So a lone mark is drawn on a dotted circle, as type specimens show one, and
controls as their escapes.
"""

from __future__ import annotations

import unicodedata

from rich.cells import cell_len


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
