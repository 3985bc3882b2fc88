"""An image and a ViT's attention over its patches, drawn with half-block pixels.

Each terminal cell shows two pixels stacked: '▀' with the top pixel as its foreground colour and the
bottom pixel as its background, so a 16x16 image takes 16 columns x 8 rows. Two panels side by side: the
image in grey, and the same image tinted by how much the class token attends to each patch.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

MAX_PIXELS = 32  # bigger images (ViT-Base's 224) are averaged down to this many pixels a side


def shrink(pixels: list[list[float]], size: int = MAX_PIXELS) -> list[list[float]]:
    """Average square blocks so the image is at most `size` pixels a side."""
    step = max(1, -(-len(pixels) // size))
    n = len(pixels) // step
    return [[sum(pixels[r * step + i][c * step + j] for i in range(step) for j in range(step)) / step**2
             for c in range(n)] for r in range(n)]


def _grey(v: float) -> str:
    level = int(round(255 * min(1.0, max(0.0, v))))
    return f"rgb({level},{level},{level})"


def _heat(v: float, a: float) -> str:
    """Grey pixel `v` under attention `a` (0..1): more attention, more orange."""
    g = min(1.0, max(0.0, v)) * (1 - 0.75 * a)
    r, gr, b = g + 0.75 * a, g + 0.45 * a, g
    return f"rgb({int(255 * min(1, r))},{int(255 * min(1, gr))},{int(255 * min(1, b))})"


def render(pixels: list[list[float]], attention: list[list[float]] | None) -> Text:
    """`pixels` (I, I) in 0..1; `attention` (G, G) over the patches (None: the image only)."""
    size = len(pixels)
    grid = len(attention) if attention else 1
    top = max((max(row) for row in attention), default=1.0) if attention else 1.0
    text = Text()
    for y in range(0, size - 1, 2):
        for panel in (0, 1) if attention else (0,):
            for x in range(size):
                colours = []
                for yy in (y, y + 1):
                    v = pixels[yy][x]
                    if panel:
                        a = attention[yy * grid // size][x * grid // size] / (top or 1.0)
                        colours.append(_heat(v, a))
                    else:
                        colours.append(_grey(v))
                text.append("▀", style=f"{colours[0]} on {colours[1]}")
            text.append("  ")
        text.append("\n")
    return text


class PatchImage(Static):
    """`show(pixels, attention, caption)`: the caption, then the image and the class token's attention over the
    patch grid."""

    def show(self, pixels: list[list[float]], attention: list[list[float]] | None, caption: str) -> None:
        # The caption first: under the image it was the line a short terminal cut off (80x24: the image's 16 rows
        # filled the room left, and "image 6665: a random image ..." was hidden with no mark)
        self.update(Text(caption + "\n").append_text(render(shrink(pixels), attention)))
