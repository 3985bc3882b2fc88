"""Parameters by component as horizontal bars (share of the total, exact count)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

BAR_WIDTH = 14


def bars_table(components: dict[str, int], bar_width: int = BAR_WIDTH) -> Table:
    total = sum(components.values()) or 1
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(justify="left", no_wrap=True, min_width=10)
    table.add_column(no_wrap=True, overflow="crop", ratio=1)  # the bar gives way first on a narrow screen
    table.add_column(justify="right", no_wrap=True, min_width=6)
    table.add_column(justify="right", no_wrap=True, min_width=11)
    for name, n in components.items():
        filled = round(bar_width * n / total)
        bar = Text("█" * filled, style="bold cyan") + Text("░" * (bar_width - filled), style="dim")
        table.add_row(name, bar, f"{100 * n / total:5.1f}%", f"{n:,}")
    return table


class ParamBars(Static):
    """`show(components)` with the dict from `ParamCount.components()`."""

    # the counts are right-aligned: against the pane's scrollbar "12,672▄▄" read as a number cut (the long tier)
    DEFAULT_CSS = "ParamBars { padding-right: 1; }"

    def show(self, components: dict[str, int]) -> None:
        self.update(bars_table(components))
