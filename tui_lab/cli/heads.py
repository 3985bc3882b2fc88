"""`tui-lab heads`: every head's previous-token, duplicate-token and induction score on random tokens repeated
(TransformerLens's head detectors), one row per head."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from tui_lab.analysis.head_scores import SCORES, TITLES
from tui_lab.cli.mechanism_args import add_common, chosen_threads, dump, load_causal

EXAMPLE = "tui-lab heads --preset gpt2-toy-english --sort induction"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.epilog = f"example: {EXAMPLE}"
    parser.add_argument(
        "--seq-len",
        dest="seq_len",
        type=int,
        default=None,
        metavar="T",
        help="random tokens before their repeat (default 50, or half the model's window if less)",
    )
    parser.add_argument("--batch", type=int, default=8, metavar="N", help="rows of random tokens (default 8)")
    parser.add_argument(
        "--token-seed",
        dest="token_seed",
        type=int,
        default=0,
        metavar="S",
        help="seeds the random tokens (default 0; --seed seeds random weights)",
    )
    parser.add_argument(
        "--sort",
        choices=("layer", "previous", "duplicate", "induction"),
        default="layer",
        help="row order: by layer and head (default), or that score, highest first",
    )


def run(args: argparse.Namespace) -> int:
    loaded = load_causal(args, "heads")
    from tui_lab.mechanism.head_detectors import default_seq_len, head_scores

    seq_len = default_seq_len(loaded.config) if args.seq_len is None else args.seq_len
    with chosen_threads(loaded, rows=args.batch) as threads:
        result = head_scores(loaded.model, seq_len, args.batch, args.token_seed)
    if args.json:
        dump(loaded, result.to_dict(), threads)
        return 0
    rows = result.to_dict()["heads"]
    if args.sort != "layer":
        rows = sorted(rows, key=lambda r: -r[args.sort])
    table = Table(title=f"head detectors: mean attention on {args.batch} rows of {seq_len} random tokens repeated")
    table.add_column("head", justify="left", no_wrap=True)
    for name in SCORES:
        table.add_column(TITLES[name], justify="right", no_wrap=True)
    for r in rows:
        table.add_row(f"L{r['layer']}H{r['head']}", *(f"{r[name]:.3f}" for name in SCORES))
    Console().print(table)
    return 0
