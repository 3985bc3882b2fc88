"""Two configs side by side (seed 000's table, and GPT-2 vs Llama vs Mixtral): what it costs, what changed.

Cost first, since it is what a change buys: exact total parameters, the parameters one token goes through
(a mixture of experts routes each token to `experts_per_token` experts only), the KV cache per token (it
follows kv_heads: MHA, GQA, MQA) and forward FLOPs per token, which follow the active parameters. Then only
the fields that differ, axes included, and last the names of the fields both share. Every number comes from
`tui_lab.analysis`; this module only lays them out.

At 80 columns the Compare pane is 40 cells wide: three narrow columns, labels short. From `WIDE` cells up the
cost rows gain a B/A column and the labels their long form.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from tui_lab.analysis import count_params, flops_per_token
from tui_lab.analysis.cost import kv_bytes_per_token
from tui_lab.analysis.format import fmt_bytes, fmt_count
from tui_lab.analysis.shapes import image_length
from tui_lab.config import ModelConfig, field_names

SKIP = ("name", "source")  # labels, not architecture
WIDE = 60


@dataclass(frozen=True)
class CostRow:
    key: str  # "parameters", "active", "kv", "attention", "flops"
    short: str  # label at 80 columns
    long: str  # label when there is room
    a: str
    b: str
    ratio: str  # B / A, "" when it means nothing


def field_rows(a: ModelConfig, b: ModelConfig) -> list[tuple[str, str, str, bool]]:
    """(field, value in a, value in b, differs) for every config field but the name and the source."""
    return [(name, _show(getattr(a, name)), _show(getattr(b, name)), getattr(a, name) != getattr(b, name))
            for name in field_names() if name not in SKIP]


def compare_rows(a: ModelConfig, b: ModelConfig) -> list[tuple[str, str, str, bool]]:
    """Every field, then the exact parameter count (what the Compare tab highlights)."""
    ta, tb = count_params(a).total, count_params(b).total
    return field_rows(a, b) + [("parameters", f"{ta:,}", f"{tb:,}", ta != tb)]


def attention_kind(c: ModelConfig) -> str:
    """MHA when every query head has its own K/V head, MQA with one shared, else GQA (Ainslie et al. 2023)."""
    k = c.n_kv_heads
    return "MHA" if k == c.heads else "MQA" if k == 1 else "GQA"


def cost_rows(a: ModelConfig, b: ModelConfig, context: int) -> list[CostRow]:
    """What each config costs, from the analysis: parameters, active per token, KV cache, FLOPs per token."""
    ca, cb = count_params(a), count_params(b)
    ka, kb = _kv(a), _kv(b)
    # An image's FLOPs at its own length (its patches and the class token), whatever context text is at.
    fa, fb = flops_per_token(a, image_length(a) or context), flops_per_token(b, image_length(b) or context)
    return [
        CostRow("parameters", "params", "parameters", f"{ca.total:,}", f"{cb.total:,}", _ratio(ca.total, cb.total)),
        CostRow("active", "active", "active / token", f"{ca.active:,}", f"{cb.active:,}",
                _ratio(ca.active, cb.active)),
        CostRow("kv", "KV/token", "KV cache / token", _kv_text(a, ka), _kv_text(b, kb), _ratio(ka, kb)),
        CostRow("attention", "attention", "attention", _heads(a), _heads(b), ""),
        CostRow("flops", "FLOPs/tok", "FLOPs / token", fmt_count(fa), fmt_count(fb), _ratio(fa, fb)),
    ]


def _kv(c: ModelConfig) -> int:
    return kv_bytes_per_token(c)  # fp32, every decoder layer: 2 x layers x kv heads x d_head x 4 B


def _kv_text(c: ModelConfig, per_token: int) -> str:
    return fmt_bytes(per_token) if c.has_decoder else "no cache"  # an encoder reads the whole input at once


def _heads(c: ModelConfig) -> str:
    return f"{attention_kind(c)} {c.n_kv_heads}/{c.heads}"  # kv heads / query heads


def _ratio(x: int, y: int) -> str:
    return f"{y / x:.2f}x" if x and y else ""


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


class CompareTable:
    """A rich renderable that picks its layout from the width it is given."""

    def __init__(self, a: ModelConfig, b: ModelConfig, title_a: str, title_b: str, context: int) -> None:
        self.a, self.b, self.title_a, self.title_b, self.context = a, b, title_a, title_b, context

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Wide only when the costs table, with the configs' names in its header, fits whole: a cut there
        # once read "124,439,8…".
        wide = options.max_width >= WIDE and \
            Measurement.get(console, options.update_width(10_000), self._costs(True)).maximum <= options.max_width
        changes = self._changes(wide, stacked=False)
        if Measurement.get(console, options.update_width(10_000), changes[0]).maximum > options.max_width:
            changes = self._changes(wide, stacked=True)  # each field's name above its values
        yield Group(self._costs(wide), *self._notes(), Text(""), *changes)

    def _costs(self, wide: bool) -> Table:
        images = [image_length(c) for c in (self.a, self.b) if image_length(c)]  # counted at their own length
        context = f"{self.context} (image {images[0]})" if images else f"{self.context}"
        title = f"what it costs (FLOPs: forward, per token at context {context})" if wide else \
            f"what it costs, context {context}"
        table = _table(title, wide)
        table.add_column("", no_wrap=True)
        # Narrow: the pickers above already name A and B; a long name must not take the numbers' room.
        for side, title in (("A", self.title_a), ("B", self.title_b)):
            table.add_column(f"{side} {title}" if wide else side, justify="right", no_wrap=True)
        if wide:
            table.add_column("B/A", justify="right", no_wrap=True, style="dim")
        for row in cost_rows(self.a, self.b, self.context):
            cells = [row.long if wide else row.short, row.a, row.b] + ([row.ratio] if wide else [])
            table.add_row(*cells, style="bold" if row.a != row.b else "")
        return table

    def _notes(self) -> list[Text]:
        """Why active < total: the experts a token skips (one dim line per mixture-of-experts config)."""
        return [Text(f"{side} {title}: a token goes through the router and {c.experts_per_token} of "
                     f"{c.experts} experts", style="dim")
                for side, title, c in (("A", self.title_a, self.a), ("B", self.title_b, self.b)) if c.ffn == "moe"]

    def _changes(self, wide: bool, stacked: bool) -> list[Table | Text]:
        """Field, A, B in a row; `stacked` (too narrow for the row whole), each field's name on a line above its
        values: a value is never folded mid-word ("encoder-de" over "coder"), a value too long ends in "…"."""
        rows = field_rows(self.a, self.b)
        changed = [r for r in rows if r[3]]
        table = _table(f"what changed: {len(changed)} of {len(rows)} fields", wide)
        if not stacked:
            table.add_column("field", no_wrap=True, overflow="ellipsis")
        table.add_column("A", justify="right", no_wrap=True, overflow="ellipsis")
        table.add_column("B", justify="right", no_wrap=True, overflow="ellipsis")
        for name, va, vb, _ in changed:
            if stacked:
                table.add_row(Text(name, justify="left"), "", style="yellow")
                table.add_row(va, vb, style="yellow")
            else:
                table.add_row(name, va, vb, style="yellow")
        same = [name for name, _, _, differs in rows if not differs]
        return [table, Text("same in both: " + (", ".join(same) or "nothing"), style="dim")]


def _table(title: str, wide: bool) -> Table:
    return Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD if wide else None,
                 show_edge=False, pad_edge=False, padding=(0, 1), expand=False)


def compare_table(a: ModelConfig, b: ModelConfig, title_a: str, title_b: str, context: int = 16) -> CompareTable:
    return CompareTable(a, b, title_a, title_b, context)
