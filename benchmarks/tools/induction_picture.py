"""The README's induction-head picture, computed: train the induction-heads experiment's two-layer model and
draw, on one held-out sequence, the attention of its best induction head and of the layer-0 head it reads.

    PYTHONPATH=. python benchmarks/tools/induction_picture.py            # seed 1, 500 steps (the README's), ~20 s
    PYTHONPATH=. python benchmarks/tools/induction_picture.py --full     # 1,500 steps

Prints the picture as text (the README pastes it): rows are the query positions of the repeated block, columns
the key positions from the first block's start to the end of the repeat; each cell is shaded by the attention
weight (' ' < 0.1, '░' < 0.3, '▒' < 0.5, '▓' < 0.7, '█' the rest). Tokens are named by letters (A, B, ...) in
order of first appearance, so the repeat reads the same letters again.
"""

from __future__ import annotations

import argparse
import string

import torch

from tui_lab.experiments import induction_heads as ih
from tui_lab.mechanism.cache import layer_points, run_with_cache

SHADES = ((0.1, " "), (0.3, "░"), (0.5, "▒"), (0.7, "▓"), (2.0, "█"))
NAMES = string.ascii_uppercase + string.ascii_lowercase


def shade(w: float) -> str:
    return next(c for limit, c in SHADES if w < limit)


def names(ids: list[int]) -> dict[int, str]:
    seen: dict[int, str] = {}
    for t in ids:
        seen.setdefault(t, NAMES[len(seen) % len(NAMES)])
    return seen


def grid(pattern: torch.Tensor, ids: list[int], s: int, k: int, title: str) -> list[str]:
    """The block of `pattern` (L, L) with queries s+k..s+2k-1 and keys s..s+2k-1, one character per cell."""
    label = names(ids[s:s + 2 * k])
    keys = range(s, s + 2 * k)
    lines = [title, "      keys: " + "".join(label[ids[j]] for j in keys)]
    for q in range(s + k, s + 2 * k):
        row = "".join(shade(float(pattern[q, j])) if j <= q else "·" for j in keys)
        lines.append(f"query {label[ids[q]]}  │{row}│")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="1,500 steps (default: 500, the README's)")
    args = parser.parse_args()
    # the README's picture is seed 1 cut at 500 steps (the quick run was 500 steps then; it is 1,000 now)
    options = ih.EXPERIMENT.resolve(quick=not args.full, sets=None if args.full else {"steps": "500"})
    torch.set_num_threads(options["threads"])
    run = ih.train(options, 2, lambda *a: None, lambda: False)
    held = ih.batch(options["eval_batch"], options, torch.Generator().manual_seed(options["seed"] + 10_000))
    points = layer_points(run.model.config, "attn.hook_pattern")
    with torch.no_grad():
        _, cache = run_with_cache(run.model, held.ids, names=points)
    patterns = cache.stack(points)  # (layers, N, H, L, L)
    induction, previous = ih.head_scores(patterns, held)
    head = int(induction[1].argmax())
    # the layer-0 head whose mean ablation lowers that head's induction score most (the experiment's `_reads`)
    reads = []
    for h0 in range(options["heads"]):
        from tui_lab.mechanism.ablation import ablate_head

        z = layer_points(run.model.config, "attn.hook_z")[0]
        with torch.no_grad():
            _, clean_z = run_with_cache(run.model, held.ids, names=[z])
            mean = clean_z[z].mean(dim=(0, 1))[h0]
            from tui_lab.model.hooks import attached

            with attached(run.model, [(z, ablate_head(0, h0, mean))]):
                _, c = run_with_cache(run.model, held.ids, names=points)
        reads.append(float(ih.head_scores(c.stack(points), held)[0][1, head]))
    read = min(range(options["heads"]), key=reads.__getitem__)
    n = int((held.k == 8).nonzero()[0]) if (held.k == 8).any() else int(held.k.argmin())  # a short block: narrow
    s, k, ids = int(held.start[n]), int(held.k[n]), held.ids[n].tolist()
    print(f"steps {options['steps']}, seed {options['seed']}; phase change at step {run.phase_step}; "
          f"repeated/first loss at the end {run.repeat[-1] / run.first[-1]:.2f}")
    print(f"L1H{head}: induction score {float(induction[1, head]):.2f} (held-out batch); "
          f"L0H{read}: previous-token score {float(previous[0, read]):.2f}, its ablation takes L1H{head}'s "
          f"induction score to {reads[read]:.2f}")
    left = grid(patterns[0, n, read], ids, s, k, f"layer 0, head {read} (read by the induction head)")
    right = grid(patterns[1, n, head], ids, s, k, f"layer 1, head {head} (induction)")
    width = max(len(line) for line in left) + 4
    for a, b in zip(left, right, strict=True):
        print(a.ljust(width) + b)


if __name__ == "__main__":
    main()
