"""`tui-lab patch`: activation patching of the residual stream, a layers x positions table of how much of the
clean logit difference comes back when the clean `hook_resid_pre` is restored in the corrupted run."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from tui_lab.cli.mechanism_args import add_common, add_token, dump, load_causal, token_from_args, window


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.add_argument("--prompt", required=True, help="the clean prompt")
    parser.add_argument("--corrupt", required=True, help="the corrupted prompt (as many tokens as --prompt)")
    add_token(parser, "answer", "the clean answer")
    add_token(parser, "wrong", "the wrong answer (the corrupted prompt's)")


def run(args: argparse.Namespace) -> int:
    loaded = load_causal(args, "patch")
    from tui_lab.mechanism.data import text_batch
    from tui_lab.mechanism.patching import patch_residual

    answer, wrong = token_from_args(args, loaded, "answer"), token_from_args(args, loaded, "wrong")
    if answer is None or wrong is None:
        raise ValueError(f"--{'answer' if answer is None else 'wrong'} (or its -id form) is required")
    device = next(loaded.model.parameters()).device
    clean = text_batch(loaded.codec, args.prompt, window(loaded), "--prompt")[0].to(device)
    corrupt = text_batch(loaded.codec, args.corrupt, window(loaded), "--corrupt")[0].to(device)
    table = patch_residual(loaded.model, clean, corrupt, answer, wrong)
    from tui_lab.mechanism.tokens import token_text

    tokens = [token_text(loaded.codec, int(i)) for i in clean]
    attribution = _attribution(loaded.model, clean, answer, wrong)
    if args.json:
        dump(loaded, {**table.to_dict(), "tokens": tokens, "answer": answer, "wrong": wrong,
                      "head_attribution": attribution})
        return 0
    grid = Table(title=f"patching: recovered logit difference (clean {table.ld_clean:.3f}, "
                       f"corrupt {table.ld_corrupt:.3f})")
    grid.add_column("layer")
    for token in tokens:
        grid.add_column(repr(token)[1:-1], justify="right")
    for layer, row in enumerate(table.values):
        grid.add_row(str(layer), *(f"{v:.2f}" for v in row))
    Console().print(grid)
    return 0


def _attribution(model, clean, answer: int, wrong: int) -> list[list[float]] | None:
    """Each head's direct share of the clean logit difference (layers x heads); None for a post-LN model,
    whose stream is renormalised after every sublayer (no direct path to attribute)."""
    from tui_lab.mechanism.attribution import head_logit_attribution

    if model.config.norm_position != "pre":
        return None
    return head_logit_attribution(model, clean, answer, wrong).tolist()
