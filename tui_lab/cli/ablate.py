"""`tui-lab ablate`: a layers x heads table of how much the held-out loss (or one token's logit) moves when
one head's output is zeroed or replaced by its mean: the mean change over the batch's windows, and under it
their spread (standard deviation) when there are several."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from tui_lab.cli.grid_tables import grid_tables
from tui_lab.cli.mechanism_args import add_common, add_token, chosen_threads, dump, load_causal, token_from_args, window

SEQ_LEN = 64  # tokens per held-out window unless the model's window is shorter
REFERENCE_WINDOWS = 64  # windows a --mean-over reference averages over (more than the batch measured: steadier means)


EXAMPLE = 'tui-lab ablate --preset gpt2-toy-english --answer " the"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.epilog = f"example: {EXAMPLE}"
    parser.add_argument("--mode", choices=("zero", "mean"), default="zero",
                        help="zero: z of the head set to 0; mean: to its mean over the batch's positions")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--text", help="measure on this text (default: held-out windows of the built-in corpus)")
    source.add_argument("--data", metavar="FILE", help="measure on held-out windows of this text file "
                                                       "(its last 10%%, as `tui-lab train --data` holds out)")
    parser.add_argument("--seq-len", dest="seq_len", type=int, default=None, metavar="L",
                        help=f"tokens per held-out window (default: {SEQ_LEN}, or the model's window if shorter)")
    parser.add_argument("--batch", type=int, default=8, metavar="N", help="held-out windows (default: 8)")
    parser.add_argument("--mean-over", dest="mean_over", metavar="held-out|FILE",
                        help="--mode mean: each head's mean over this text instead of the text measured: "
                             f"'held-out', up to {REFERENCE_WINDOWS} held-out windows of the model's data (the "
                             f"--data file's, else the built-in corpus'), or up to {REFERENCE_WINDOWS} windows of "
                             "all of FILE")
    add_token(parser, "answer", "measure this token's logit at the last position of every window (their mean and "
                                "spread) instead of the loss")


def run(args: argparse.Namespace) -> int:
    loaded = load_causal(args, "ablate")
    from tui_lab.mechanism.ablation import Metric, head_ablation
    from tui_lab.mechanism.data import held_out_batch, text_batch

    answer = token_from_args(args, loaded, "answer")
    note = None
    if args.text is not None:
        ids = text_batch(loaded.codec, args.text, window(loaded), "--text")
    else:
        limit = window(loaded)
        seq_len = args.seq_len if args.seq_len is not None else min(SEQ_LEN, limit or SEQ_LEN)
        if limit and seq_len > limit:
            raise ValueError(f"--seq-len {seq_len} is past this model's window ({limit} tokens)")
        ids = held_out_batch(loaded.codec, seq_len, args.batch, args.data)
        if ids.shape[0] < args.batch:  # the split ran out of windows: say so, never measure fewer in silence
            note = (f"--batch {args.batch}: the held-out split holds only {ids.shape[0]} windows of {seq_len} tokens;"
                    f" measured on those {ids.shape[0]}")
            print(f"tui-lab: note: {note}", file=sys.stderr)
    ids = ids.to(next(loaded.model.parameters()).device)
    reference = _reference(args, loaded)
    with chosen_threads(loaded, rows=ids.shape[0]) as threads:
        table = head_ablation(loaded.model, ids, args.mode, Metric(answer), reference=reference)
    if args.json:
        over = {"mean_over": args.mean_over, "mean_over_windows": reference.shape[0]} if reference is not None else {}
        dump(loaded, {**table.to_dict(), "windows": ids.shape[0], "tokens_per_window": ids.shape[1], **over,
                      **({"note": note} if note else {})}, threads)
        return 0
    console = Console()
    for grid in _grids(table, args.mode, ids.shape[0]):
        console.print(grid)
    return 0


def _reference(args: argparse.Namespace, loaded):
    """The ids --mean-over names (None without it): held-out windows of the model's data, or a file's windows."""
    if args.mean_over is None:
        return None
    if args.mode != "mean":
        raise ValueError("--mean-over: only --mode mean averages over a reference text")
    from tui_lab.data.corpus import read_text
    from tui_lab.mechanism.data import held_out_batch, text_windows

    limit = window(loaded)
    seq_len = args.seq_len if args.seq_len is not None else min(SEQ_LEN, limit or SEQ_LEN)
    if args.mean_over == "held-out":
        return held_out_batch(loaded.codec, seq_len, REFERENCE_WINDOWS, args.data)
    try:
        text = read_text(args.mean_over)
    except ValueError as err:  # read_text names its field "data"; here the file is --mean-over's
        raise ValueError(f"--mean-over: {str(err).removeprefix('data: ')}") from None
    return text_windows(loaded.codec, text, seq_len, REFERENCE_WINDOWS, "--mean-over")


def _grids(table, mode: str, windows: int) -> list[Table]:
    """The mean change per head, with several windows their spread on a second line of each cell; the heads in
    as many tables as 80 columns need."""
    what = "loss" if table.metric == "loss" else "logit"
    over = f"mean ± sd over {windows} windows, " if windows > 1 else ""
    cells = []
    for layer, row in enumerate(table.values):
        spread = table.spread[layer] if windows > 1 else [None] * len(row)
        cells.append([f"{v:+.4f}" if s is None else f"{v:+.4f}\n±{s:.4f}" for v, s in zip(row, spread, strict=True)])
    rows = table.rows or [str(layer) for layer in range(len(table.values))]
    heads = [f"head {h}" for h in range(len(table.values[0]))]
    return grid_tables(f"{mode} ablation: change in {what} ({over}clean {table.clean:.4f})", "layer", rows, heads,
                       cells)
