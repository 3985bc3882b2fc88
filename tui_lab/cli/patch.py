"""`tui-lab patch`: activation patching, how much of the clean metric comes back when a clean activation is put
into the corrupted run: the residual stream or a sublayer's output at one layer and position (layers x
positions), a head's z or pattern (layers x heads), or a path from each earlier head to one receiver head's
q, k or v (path patching); or attribution patching's first-order estimate of those tables (`--method
attribution`). A clean-corrupt gap too small or of the wrong sign is one warning line."""

from __future__ import annotations

import argparse
import re

from rich.console import Console

from tui_lab.cli.grid_tables import grid_tables
from tui_lab.cli.layout import say
from tui_lab.cli.mechanism_args import add_common, add_token, chosen_threads, dump, load_causal, token_from_args, window

KINDS = ("resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out", "z", "pattern", "path")
EXAMPLE = (
    'tui-lab patch --preset gpt2-toy-english --prompt "Anna walked to the river. Tom walked to the" '
    '--corrupt "Anna walked to the hill. Tom walked to the" --answer " river" --wrong " hill"'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.epilog = f"example: {EXAMPLE}"
    parser.add_argument("--prompt", required=True, help="the clean prompt")
    parser.add_argument("--corrupt", required=True, help="the corrupted prompt (as many tokens as --prompt)")
    add_token(parser, "answer", "the clean answer")
    add_token(parser, "wrong", "the wrong answer (the corrupted prompt's; needed by --metric logit_diff)")
    parser.add_argument(
        "--kind",
        choices=KINDS,
        default="resid_pre",
        help="what is restored: a stream point or sublayer output per layer and position, a head's "
        "z or pattern at every position, or a path to --receiver (default resid_pre)",
    )
    parser.add_argument(
        "--metric",
        choices=("logit_diff", "logit", "loss"),
        default="logit_diff",
        help="at the last position: answer - wrong logit, the answer's logit, or -log p(answer)",
    )
    parser.add_argument(
        "--method",
        choices=("activation", "attribution"),
        default="activation",
        help="activation: one patched pass per layer (exact); attribution: the first-order estimate from one "
        "forward and one backward pass (gradient x activation difference)",
    )
    parser.add_argument("--receiver", metavar="LxHy", help="with --kind path: the receiving head, e.g. L1H2")
    parser.add_argument(
        "--receiver-input",
        dest="receiver_input",
        default="qkv",
        metavar="q|k|v",
        help="with --kind path: which of the receiver's inputs the path ends in (default qkv: all)",
    )


def _receiver(args: argparse.Namespace) -> tuple[int, int]:
    match = re.fullmatch(r"[Ll](\d+)[Hh](\d+)", args.receiver or "")
    if match is None:
        raise ValueError(
            f"--receiver must name a head as L<layer>H<head> (e.g. L1H2), not {args.receiver!r}"
            if args.receiver
            else "--kind path needs --receiver L<layer>H<head> (e.g. L1H2)"
        )
    return int(match[1]), int(match[2])


def _table(args: argparse.Namespace, loaded, clean, corrupt, metric):
    from tui_lab.mechanism.attribution_patching import attribution_patching
    from tui_lab.mechanism.patching import activation_patching
    from tui_lab.mechanism.path_patching import path_patching

    if args.method == "attribution":
        if args.kind == "path":
            raise ValueError("--method attribution covers the points of --kind, not path")
        return attribution_patching(loaded.model, clean, corrupt, metric, args.kind)
    if args.kind == "path":
        return path_patching(loaded.model, clean, corrupt, metric, _receiver(args), tuple(args.receiver_input))
    if args.receiver is not None:
        raise ValueError("--receiver is read by --kind path only")
    return activation_patching(loaded.model, clean, corrupt, metric, args.kind)


def run(args: argparse.Namespace) -> int:
    loaded = load_causal(args, "patch")
    from tui_lab.mechanism.data import text_batch
    from tui_lab.mechanism.patching import PatchMetric
    from tui_lab.mechanism.tokens import token_text

    answer, wrong = token_from_args(args, loaded, "answer"), token_from_args(args, loaded, "wrong")
    if answer is None or (wrong is None and args.metric == "logit_diff"):
        raise ValueError(f"--{'answer' if answer is None else 'wrong'} (or its -id form) is required")
    device = next(loaded.model.parameters()).device
    clean = text_batch(loaded.codec, args.prompt, window(loaded), "--prompt")[0].to(device)
    corrupt = text_batch(loaded.codec, args.corrupt, window(loaded), "--corrupt")[0].to(device)
    with chosen_threads(loaded) as threads:
        table = _table(args, loaded, clean, corrupt, PatchMetric(args.metric, answer, wrong))
        attribution = _attribution(loaded.model, clean, answer, wrong)
    tokens = [token_text(loaded.codec, int(i)) for i in clean]
    if args.json:
        dump(
            loaded,
            {**table.to_dict(), "tokens": tokens, "answer": answer, "wrong": wrong, "head_attribution": attribution},
            threads,
        )
        return 0
    _print(table, tokens)
    return 0


def _print(table, tokens: list[str]) -> None:
    what = {"logit_diff": "logit difference", "logit": "answer's logit", "loss": "loss"}[table.metric]
    title = f"patching {table.kind}: recovered {what} (clean {table.ld_clean:.3f}, corrupt {table.ld_corrupt:.3f})"
    if table.columns == "position":
        columns = [repr(token)[1:-1] for token in tokens]
    else:
        columns = [f"H{h}" for h in range(len(table.values[0]))]
    cells = [[f"{v:.2f}" for v in row] for row in table.values]
    rows = [f"L{layer}" for layer in range(len(table.values))]
    console = Console()
    for grid in grid_tables(title, "layer", rows, columns, cells):
        console.print(grid)
    if table.warning:
        say(console, table.warning, style="yellow")  # wrapped at spaces, as every line the CLI writes


def _attribution(model, clean, answer: int, wrong: int | None) -> list[list[float]] | None:
    """Each head's direct share of the clean logit difference (layers x heads); None for a post-LN model,
    whose stream is renormalised after every sublayer (no direct path to attribute)."""
    from tui_lab.mechanism.attribution import head_logit_attribution

    if model.config.norm_position != "pre":
        return None
    return head_logit_attribution(model, clean, answer, wrong).tolist()
