"""Gradient norm per layer as horizontal bars (text, one line per layer group)."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widgets import Static

BAR = "█"
PARTIAL = " ▏▎▍▌▋▊▉"


def bar(fraction: float, width: int) -> str:
    """A bar `fraction` of `width` cells long, in eighths of a cell."""
    eighths = max(0, min(width * 8, round(fraction * width * 8)))
    full, part = divmod(eighths, 8)
    return BAR * full + (PARTIAL[part] if part else "")


class GradNorms(Static):
    """`show(norms)` with {group name: norm}; bars scale to the largest norm (log-free: what clips shows)."""

    DEFAULT_CSS = "GradNorms { height: auto; }"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("gradient norms appear with the first step", id=id, classes=classes)
        self.norms: dict[str, float] = {}

    def show(self, norms: dict[str, float], total: float | None = None) -> None:
        # A relayout of the screen holds the UI thread (and the GIL the trainer needs): only when the rows the
        # text takes at this width are not the rows laid out. Counting the groups was not enough: the total's
        # line wraps as its digits grow (the long tier's translator 160x48 walk at 3c7da5b, seed 463652001:
        # "total 0.00873 (before clipping)" took a second row and decoder.1's bar went under the box's edge).
        self.norms = dict(norms)
        text = self.render_norms(total)
        width = self.content_region.width
        rows = len(text.wrap(self.app.console, width)) if width else self.size.height
        self.update(text, layout=rows != self.size.height)

    def render_norms(self, total: float | None = None) -> Text:
        if not self.norms:
            return Text("no gradients yet", style="dim")
        finite = [v for v in self.norms.values() if math.isfinite(v)]
        top = max(finite, default=1.0) or 1.0
        name_w = max(len(k) for k in self.norms)
        width = max(4, (self.size.width or 40) - name_w - 10)
        text = Text()
        if total is not None:
            text.append(f"total {total:.3g} (before clipping)\n", style="bold")
        for name, value in self.norms.items():
            text.append(f"{name:>{name_w}} ", style="dim")
            if math.isfinite(value):
                text.append(bar(value / top, width), style="cyan")
                text.append(f" {value:.2g}\n")
            else:
                text.append(f"{value}\n", style="bold red")
        text.rstrip()
        return text
