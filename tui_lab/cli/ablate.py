"""`tui-lab ablate`: a layers x heads table of how much the held-out loss (or one token's logit) moves when
one head's output is zeroed or replaced by its mean."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from tui_lab.cli.mechanism_args import add_common, add_token, dump, load_causal, token_from_args, window

SEQ_LEN = 64  # tokens per held-out window unless the model's window is shorter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.add_argument("--mode", choices=("zero", "mean"), default="zero",
                        help="zero: z of the head set to 0; mean: to its mean over the batch's positions")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--text", help="measure on this text (default: held-out windows of the built-in corpus)")
    source.add_argument("--data", metavar="FILE", help="measure on held-out windows of this text file "
                                                       "(its last 10%%, as `tui-lab train --data` holds out)")
    parser.add_argument("--seq-len", dest="seq_len", type=int, default=None, metavar="L",
                        help=f"tokens per held-out window (default: {SEQ_LEN}, or the model's window if shorter)")
    parser.add_argument("--batch", type=int, default=8, metavar="N", help="held-out windows (default: 8)")
    add_token(parser, "answer", "measure this token's logit at the last position instead of the loss")


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
    table = head_ablation(loaded.model, ids, args.mode, Metric(answer))
    if args.json:
        dump(loaded, {**table.to_dict(), "rows": ids.shape[0], "tokens_per_row": ids.shape[1],
                      **({"note": note} if note else {})})
        return 0
    what = "loss" if answer is None else "logit"
    grid = Table(title=f"{args.mode} ablation: change in {what} (clean {table.clean:.4f})")
    grid.add_column("layer")
    for h in range(len(table.values[0])):
        grid.add_column(f"head {h}", justify="right")
    for layer, row in enumerate(table.values):
        grid.add_row(str(layer), *(f"{v:+.4f}" for v in row))
    Console().print(grid)
    return 0
