"""The Architecture view's read-outs as Rich tables and cells: pure arithmetic on the config, no Textual.

The summary's FLOPs and memory, the KV cache with MHA, GQA and MQA side by side, the paper's rounded figure
beside the exact count, and the Shapes tab's narrow cells. Nothing here needs torch, so the page follows
every keystroke before torch has loaded.
"""

from __future__ import annotations

import dataclasses

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from tui_lab.analysis import count_params, flops_per_token, memory
from tui_lab.analysis.cost import kv_cache_variants
from tui_lab.analysis.format import fmt_bytes, fmt_count
from tui_lab.config import ModelConfig
from tui_lab.presets import load_preset

PAPER_PRESET = "transformer-2017-base"


def paper_note(config: ModelConfig) -> str:
    """For the 2017 base: the paper's rounded figure next to the exact count, never in place of it."""
    try:
        base = load_preset(PAPER_PRESET)
    except ValueError:
        return ""
    if dataclasses.replace(config, name=base.name) != base:
        return ""
    return (f'Vaswani et al. (2017, Table 3) give "65M" for the base model; counted here, with a shared '
            f"37,000-token embedding and every bias: {count_params(config).total:,}.")


def summary_text(config: ModelConfig, batch: int, seq_len: int, source: int | None = None) -> Table:
    """FLOPs and memory as a grid; the third column explains, and wraps when narrow (a cut there once hid
    the end of the exact FLOPs count: a number is whole or absent). An encoder-decoder's activations count its
    source (`source`) and target lengths; its FLOPs per target token take the source as long as the target (S = T).
    At 80x24 the KV rows must stay above the fold: the words are as short as the lines they replaced."""
    two = config.family == "encoder-decoder"
    source = seq_len if source is None or not two else source
    mem = memory(config, batch=batch, seq_len=seq_len, source=source)
    flops = flops_per_token(config, seq_len)
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(no_wrap=True, min_width=13)
    table.add_column(justify="right", no_wrap=True, min_width=10)
    table.add_column(style="dim", overflow="fold", ratio=1)
    context = f"S = T = {seq_len}" if two else f"context {seq_len}"  # as short as the line it replaced (80x24)
    table.add_row("FLOPs / token", f"{fmt_count(flops)}", ExactCount(flops, f"forward, {context}"))
    table.add_row("weights", fmt_bytes(mem.weights), "fp32")
    table.add_row("training", fmt_bytes(mem.training), "AdamW: weights + grads + 2 moments")
    tokens = f"(T {seq_len} + S {source})" if two else f"{seq_len} tokens"  # the letters of the inputs above
    table.add_row("activations", fmt_bytes(mem.activations), f"batch {batch} x {tokens}")
    if not config.has_decoder:  # nothing is decoded token by token: "0 B" would read as a cache of nothing
        table.add_row("KV cache", "none", "an encoder reads its whole input in one pass")
        return table
    table.add_row("KV / token", fmt_bytes(mem.kv_cache_per_token), "2 x layers x kv heads x d_head x 4 B")
    table.add_row("KV cache full", fmt_bytes(mem.kv_cache_full), f"{config.max_len:,} tokens, one sequence")
    return table


class ExactCount:
    """`count` in full, then `words`, wrapped at spaces; the count left out where its column is narrower than
    it (a fold cut "984,808,079,83" / "2" across lines: a number is whole or absent)."""

    def __init__(self, count: int, words: str) -> None:
        self.count, self.words = f"{count:,}", words

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest = max(len(w) for w in self.words.split())
        return Measurement(longest, len(self.count) + 1 + len(self.words))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown = f"{self.count} {self.words}" if len(self.count) <= options.max_width else self.words
        yield Text(shown, style="dim", overflow="fold")


def kv_table(config: ModelConfig) -> Table:
    """KV cache bytes with MHA, GQA and MQA side by side, the rest of the config unchanged; ours marked *.

    One row per variant so that it fits the narrow right panel at 80 columns."""
    table = Table(title="KV cache, fp32: MHA / GQA / MQA", title_justify="left", box=None, padding=(0, 1),
                  show_edge=False, title_style="bold")
    table.add_column("", no_wrap=True)
    table.add_column("kv heads", justify="right", no_wrap=True)
    table.add_column("per token", justify="right", no_wrap=True)
    table.add_column(f"{config.max_len:,} tok", justify="right", no_wrap=True)
    for v in kv_cache_variants(config):
        table.add_row(f"{v.name}{' *' if v.current else ''}", f"{v.kv_heads}", fmt_bytes(v.per_token),
                      fmt_bytes(v.full))
    return table


def short_path(path: str, depth: int) -> str:
    """A layer's own rows without the layer's name ("decoder.3.ffn.up" -> "  ffn.up"): narrow, still unique
    in order, since the layer's row ("decoder.3") comes right before them."""
    if depth < 2:
        return path
    return "  " + ".".join(path.split(".")[2:])


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ",".join(str(n) for n in shape) + ")"  # no spaces: the column fits at 80x24

