"""Attribution patching against real activation patching on small models: how far the first-order estimate
(one forward, one backward pass) is from the tables it stands in for (issue 40, what to add 2).

For each model and each kind of point (resid_pre/mid/post, attn_out, mlp_out per layer and position; z and pattern
per head), both tables are normalised recoveries (1 = the point restores the whole clean-corrupt gap). Printed per
row: Spearman's rank correlation over every cell, the largest absolute error, the largest real recovery (for
scale) and the cell where the error is largest. Models: the shipped English toy on the river/hill pair (a trained
model), and random-weight gpt2-toy and llama-toy presets on random prompts. Last line: JSON.

    python benchmarks/agreement/attribution_patching.py [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import platform

import torch

from tui_lab.loading import load_model
from tui_lab.mechanism.attribution_patching import attribution_patching
from tui_lab.mechanism.patching import POINTS, PatchMetric, activation_patching

CLEAN, CORRUPT = "Anna walked to the river. Tom walked to the", "Anna walked to the hill. Tom walked to the"


def ranks(x: torch.Tensor) -> torch.Tensor:
    """Average ranks (ties share theirs), as Spearman's correlation takes them."""
    order = x.argsort()
    r = torch.empty_like(x)
    r[order] = torch.arange(len(x), dtype=x.dtype)
    for value in x.unique():
        same = x == value
        r[same] = r[same].mean()
    return r


def spearman(a: torch.Tensor, b: torch.Tensor) -> float:
    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / (ra.norm() * rb.norm()))


def cases(seed: int):
    """(name, model, clean ids, corrupt ids, metric) of each model measured."""
    toy = load_model("preset", "gpt2-toy-english")
    codec = toy.codec
    river, hill = codec.encode(" river")[0], codec.encode(" hill")[0]
    yield (
        "gpt2-toy-english",
        toy.model,
        torch.tensor(codec.encode(CLEAN)),
        torch.tensor(codec.encode(CORRUPT)),
        PatchMetric("logit_diff", river, hill),
    )
    gen = torch.Generator().manual_seed(seed)
    for preset in ("gpt2-toy", "llama-toy"):
        torch.manual_seed(seed)
        loaded = load_model("preset", preset)
        vocab = loaded.config.vocab
        clean = torch.randint(0, vocab, (12,), generator=gen)
        corrupt = clean.clone()
        corrupt[4] = (clean[4] + 1 + torch.randint(0, vocab - 1, (1,), generator=gen)) % vocab  # one token swapped
        top = loaded.model(clean[None])[0, -1].topk(2).indices.tolist()
        yield f"{preset} (random)", loaded.model.eval(), clean, corrupt, PatchMetric("logit_diff", *top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"cpu: {platform.processor() or platform.machine()}; torch {torch.__version__}; float32")
    print(f"{'model':<20} {'kind':<10} {'cells':>5} {'spearman':>8} {'max err':>8} {'max |real|':>10}  worst cell")
    rows = []
    for name, model, clean, corrupt, metric in cases(args.seed):
        model.eval()
        for kind in POINTS:
            real = activation_patching(model, clean, corrupt, metric, kind)
            approx = attribution_patching(model, clean, corrupt, metric, kind)
            a, b = torch.tensor(real.values).flatten(), torch.tensor(approx.values).flatten()
            err = (a - b).abs()
            worst = int(err.argmax())
            width = len(real.values[0])
            cell = f"L{worst // width} {'H' if real.columns == 'head' else 'pos '}{worst % width}"
            row = {
                "model": name,
                "kind": kind,
                "cells": len(a),
                "spearman": spearman(a, b),
                "max_error": float(err.max()),
                "max_real": float(a.abs().max()),
                "worst": cell,
                "real_at_worst": float(a[worst]),
                "attribution_at_worst": float(b[worst]),
            }
            rows.append(row)
            print(
                f"{name:<20} {kind:<10} {row['cells']:>5} {row['spearman']:>8.3f} {row['max_error']:>8.3f} "
                f"{row['max_real']:>10.3f}  {cell}: {row['real_at_worst']:.3f} vs {row['attribution_at_worst']:.3f}"
            )
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
