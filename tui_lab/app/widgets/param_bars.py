"""Parameters by component as horizontal bars (share of the total, exact count)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

BAR_WIDTH = 24


def bars_table(components: dict[str, int], bar_width: int = BAR_WIDTH) -> Table:
    total = sum(components.values()) or 1
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="left")
    table.add_column()
    table.add_column(justify="right")
    table.add_column(justify="right")
    for name, n in components.items():
        filled = round(bar_width * n / total)
        bar = Text("█" * filled, style="bold cyan") + Text("░" * (bar_width - filled), style="dim")
        table.add_row(name, bar, f"{100 * n / total:5.1f}%", f"{n:,}")
    return table


class ParamBars(Static):
    """`show(components)` with the dict from `ParamCount.components()`."""

    def show(self, components: dict[str, int]) -> None:
        self.update(bars_table(components))
