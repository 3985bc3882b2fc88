"""`tui-lab lens`: the logit lens of a prompt, every residual point x every position (top token, probability, top-k)."""

from __future__ import annotations

import argparse

from rich.console import Console

from tui_lab.cli.grid_tables import grid_tables
from tui_lab.cli.mechanism_args import add_common, chosen_threads, dump, load_causal, window

EXAMPLE = 'tui-lab lens --preset gpt2-toy-english --prompt "Anna walked to the river. Tom walked to the"'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.epilog = f"example: {EXAMPLE}"
    parser.add_argument("--prompt", required=True, help="the text to read")
    parser.add_argument("--top", type=int, default=5, metavar="K", help="tokens listed per cell (default: 5)")


def run(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise ValueError(f"--top must be at least 1, got {args.top}")
    loaded = load_causal(args, "lens")
    from tui_lab.mechanism.data import text_batch
    from tui_lab.mechanism.lens import logit_lens

    ids = text_batch(loaded.codec, args.prompt, window(loaded), "--prompt")[0].tolist()
    with chosen_threads(loaded) as threads:
        table = logit_lens(loaded.model, loaded.codec, ids, k=args.top)
    if args.json:
        dump(loaded, table.to_dict(), threads)
        return 0
    console = Console()
    labels = [point.removeprefix("blocks.").replace(".hook_resid_", " ") for point in table.points]  # "0 pre"
    cells = [[f"{repr(cell[0]['token'])[1:-1]} {cell[0]['prob']:.2f}" for cell in row] for row in table.top]
    # The positions in as many tables as the width needs: a token or a probability is never cut.
    for grid in grid_tables(f"logit lens: {loaded.label} (top token and its probability)", "stream", labels,
                            [repr(token)[1:-1] for token in table.tokens], cells, width=console.width):
        console.print(grid)
    return 0
