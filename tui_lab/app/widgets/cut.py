"""Cut a line to a width and say so, never inside a word or a number (issue 25: 80x24 never lies).

"entropy 1.7…" reads as a value; "entropy …" says a value is missing. So a cut ends at the last space that
fits, then an ellipsis, and a head that ends in a whole number keeps a space before it ("0.9999 …", never
"0.9999…", which reads as a number cut short). A line with no space to cut at (one long label) loses its
end, but never in the middle of a run of digits.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "…"
NUMBER = set("0123456789.,")  # what reads as part of a number next to an ellipsis


def _head(text: str, width: int) -> int:
    """The characters of the longest head of `text` within `width` cells that does not end inside a word."""
    head = set_cell_size(text, max(width, 0)).rstrip()
    keep = len(head)
    if keep >= len(text) or text[keep] == " ":
        return keep  # the cut falls on a space already: whole words
    space = head.rfind(" ")
    if space > 0:
        return len(head[:space].rstrip())
    while keep and head[keep - 1] in NUMBER and text[keep] in NUMBER:
        keep -= 1  # one long word: never end on part of a number
    return keep


def _tail(head: str) -> str:
    return " " + ELLIPSIS if head[-1:].isdigit() else ELLIPSIS


def keep_cells(text: str, width: int) -> tuple[int, str]:
    """How many characters of `text` to keep, and the ellipsis to end them with, to fit `width` cells."""
    if cell_len(text) <= width:
        return len(text), ""
    keep = _head(text, width - 1)
    if cell_len(text[:keep] + _tail(text[:keep])) > width:
        keep = _head(text, width - 2)  # a whole number needs a space before the ellipsis
    return keep, _tail(text[:keep])


def cut(text: str, width: int) -> str:
    """`text` within `width` cells: whole, or cut at a space and ended by an ellipsis."""
    keep, tail = keep_cells(text, width)
    if not tail:
        return text
    head = text[:keep].rstrip(" ·:")
    return head + _tail(head)
