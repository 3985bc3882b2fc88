"""`tui-lab attribute`: why a prompt's answer comes out, head by head. Direct logit attribution (each head's
write through the output projection, the final norm frozen, onto the answer's logit, or the answer's minus a
wrong one's) at the last position, and the composition scores between heads of different layers (Elhage et
al. 2021: how much a later head's Q, K or V reads what an earlier head writes)."""

from __future__ import annotations

import argparse

from rich.console import Console

from tui_lab.cli.grid_tables import grid_tables
from tui_lab.cli.mechanism_args import add_common, add_token, chosen_threads, dump, load_causal, token_from_args, window

EXAMPLE = ('tui-lab attribute --preset gpt2-toy-english --prompt "Anna walked to the river. Tom walked to the" '
           '--answer " river" --wrong " hill"')


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.epilog = f"example: {EXAMPLE}"
    parser.add_argument("--prompt", required=True, help="the prompt whose next token is attributed")
    add_token(parser, "answer", "the answer whose logit is attributed")
    add_token(parser, "wrong", "a wrong answer: attribute the logit difference instead (optional)")
    parser.add_argument("--convention", choices=("lab", "tl"), default="lab",
                        help="lab: each head keeps its constant value term (ln1.b W_V + b_V) W_O; tl: "
                             "TransformerLens's default (that term in b_O, W_U centred over the vocabulary)")
    parser.add_argument("--composition", choices=("Q", "K", "V", "all"), default="K",
                        help="which composition scores to add (default K, the induction heads' kind)")


def run(args: argparse.Namespace) -> int:
    loaded = load_causal(args, "attribute")
    from tui_lab.mechanism.attribution import composition_scores, head_logit_attribution
    from tui_lab.mechanism.data import text_batch
    from tui_lab.mechanism.tokens import token_text

    answer, wrong = token_from_args(args, loaded, "answer"), token_from_args(args, loaded, "wrong")
    if answer is None:
        raise ValueError("--answer (or --answer-id) is required: the token whose logit is attributed")
    ids = text_batch(loaded.codec, args.prompt, window(loaded), "--prompt")[0]
    ids = ids.to(next(loaded.model.parameters()).device)
    kinds = ("Q", "K", "V") if args.composition == "all" else (args.composition,)
    with chosen_threads(loaded) as threads:
        heads = head_logit_attribution(loaded.model, ids, answer, wrong, convention=args.convention)  # (layers, heads)
        scores = {kind: composition_scores(loaded.model, kind) for kind in kinds}
    if args.json:
        dump(loaded, {"tokens": [token_text(loaded.codec, int(i)) for i in ids], "answer": answer, "wrong": wrong,
                      "convention": args.convention, "head_attribution": heads.tolist(), "total": float(heads.sum()),
                      "composition": {kind: s.tolist() for kind, s in scores.items()}}, threads)
        return 0
    _print(loaded, heads, scores, answer, wrong, args.convention)
    return 0


def _print(loaded, heads, scores: dict, answer: int, wrong: int | None, convention: str) -> None:
    from tui_lab.mechanism.tokens import token_text

    what = repr(token_text(loaded.codec, answer)) + (f" - {token_text(loaded.codec, wrong)!r}" if wrong is not None
                                                     else "")
    where = "TransformerLens's convention" if convention == "tl" else "value constants in their heads"
    title = f"direct logit attribution to {what}, per head (sum {float(heads.sum()):.3f}; {where})"
    cells = [[f"{v:.3f}" for v in row] for row in heads.tolist()]
    console = Console()
    for table in grid_tables(title, "layer", [str(layer) for layer in range(len(cells))],
                             [f"H{h}" for h in range(heads.shape[1])], cells):
        console.print(table)
    for kind, s in scores.items():
        layers, n = s.shape[0], s.shape[1]
        pairs = [(float(s[a, h, b, g]), a, h, b, g) for a in range(layers) for h in range(n)
                 for b in range(a + 1, layers) for g in range(n)]
        best = sorted(pairs, reverse=True)[:5]
        console.print(f"{kind}-composition, the strongest pairs: " +
                      ", ".join(f"L{a}H{h} -> L{b}H{g} {v:.3f}" for v, a, h, b, g in best) if best else
                      f"{kind}-composition: one layer has no later head to compose with")
