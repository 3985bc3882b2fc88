"""Seed 002's guided attention, side by side on copy and numbers-de (issue 27 item 5): the `cross_attention`
axis's `location-aware` and `monotonic` beside `softmax` without and with the diagonal prior
(`guided_attention`, Tachibana et al. 2017). transformer-2017-toy, the task's training defaults, --seed.

Per run: held-out exact match (greedy decoding, cached), the diagonal agreement every --every steps (the
share of held-out target words whose most-attended source word, last decoder layer, mean of heads, is the
diagonal's: `train.guided_attention.diagonal_agreement`, the existing measure), steps to alignment (the first
check at >= --threshold; null: never), and the alignment grid of one held-out example (eval mode: monotonic's
is its hard attention). numbers-de's German puts units before tens ("twenty one" -> "ein und zwanzig"), which
a monotonic alignment cannot follow. Last line: JSON.

    python benchmarks/methods/guided_cross_attention.py [--steps N] [--tasks copy numbers-de] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import time

KINDS = (("softmax", 0.0), ("softmax", 1.0), ("location-aware", 0.0), ("monotonic", 0.0))
SHADES = " .:-=+*#%@"


def label(kind: str, prior: float) -> str:
    return f"{kind} + prior {prior:g}" if prior else kind


def last_cross(model, src, src_mask, tgt_in):
    import torch

    model.eval()
    with torch.no_grad():
        out = model.run(src, tgt_in, src_mask=src_mask, need_weights=True)
    model.train()
    return [a for a in out.attentions if a.kind == "cross"][-1].weights.mean(1)  # (N, T, S)


def agreement(trainer, batch) -> float:
    from tui_lab.train.guided_attention import diagonal_agreement
    from tui_lab.train.sources import IGNORE_INDEX

    grid = last_cross(trainer.model, batch.inputs, batch.src_mask, batch.tgt_in)
    return diagonal_agreement(grid, batch.targets != IGNORE_INDEX, batch.src_mask)


def example_grid(trainer, task, text: tuple[str, str]) -> dict:
    """The last layer's cross-attention (mean of heads) over one example, rows target words, columns source."""
    import torch

    tok = task.tokenizer
    src_ids, tgt_ids = tok.encode(text[0]), tok.encode(text[1])
    src = torch.tensor([src_ids])
    tgt_in = torch.tensor([[tok.bos_id, *tgt_ids]])
    grid = last_cross(trainer.model, src, None, tgt_in)[0, :len(tgt_ids)]  # (T, S), eos row left out
    return {"source": text[0].split(), "target": text[1].split(), "weights": [[round(w, 3) for w in row]
                                                                             for row in grid.tolist()]}


def draw(grid: dict) -> str:
    width = max(len(w) for w in grid["target"])
    head = " " * (width + 1) + " ".join(w[:5].ljust(5) for w in grid["source"])
    rows = [f"{t.rjust(width)} " + " ".join((SHADES[min(9, int(w * 10))] * 5) for w in row)
            for t, row in zip(grid["target"], grid["weights"], strict=True)]
    return "\n".join([head, *rows])


def run(task_name: str, kind: str, prior: float, args) -> dict:
    import torch

    from tui_lab import load_preset
    from tui_lab.data import load_task
    from tui_lab.train import Trainer, train_config_for

    task = load_task(task_name)
    steps = args.steps or train_config_for(task_name).steps
    c = train_config_for(task_name, steps=steps, eval_every=0, sample_every=0, eval_examples=args.eval_examples,
                         guided_attention=prior, seed=args.seed)
    torch.manual_seed(args.seed)
    trainer = Trainer(load_preset("transformer-2017-toy", cross_attention=kind), c, data=task)
    held_out = trainer.source.batch("val", 128, torch.Generator().manual_seed(1))
    curve, reached = [], None
    while trainer.step_count < c.steps:
        trainer.step()
        if trainer.step_count % args.every == 0 or trainer.step_count == c.steps:
            share = agreement(trainer, held_out)
            curve.append((trainer.step_count, round(share, 3)))
            if reached is None and share >= args.threshold:
                reached = trainer.step_count
    done = trainer.evaluate()
    example = EXAMPLES[task_name]
    return {"steps_to_alignment": reached, "final_agreement": curve[-1][1], "exact_match": round(done.exact_match, 4),
            "curve": curve, "grid": example_grid(trainer, task, example)}


# One held-out-shaped example each: copy's diagonal, and numbers-de's units-before-tens swap.
EXAMPLES = {"copy": ("alpha beta gamma delta epsilon zeta", "alpha beta gamma delta epsilon zeta"),
            "numbers-de": ("three hundred forty seven", "drei hundert sieben und vierzig")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=0, help="0: the task's default (copy 300, numbers-de 400)")
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="the trainer's seed (weights, batches, noise)")
    parser.add_argument("--eval-examples", type=int, default=300)
    parser.add_argument("--tasks", nargs="+", default=["copy", "numbers-de"])
    parser.add_argument("--kinds", nargs="+", default=[label(k, p) for k, p in KINDS])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    results: dict[str, dict] = {}
    for task in args.tasks:
        for kind, prior in KINDS:
            if label(kind, prior) not in args.kinds:
                continue
            start = time.perf_counter()
            r = run(task, kind, prior, args)
            r["seconds"] = round(time.perf_counter() - start, 1)
            results.setdefault(task, {})[label(kind, prior)] = r
            print(f"{task:10s} {label(kind, prior):18s} exact match {r['exact_match']:.3f}  steps to alignment "
                  f"{r['steps_to_alignment']}  diagonal agreement {[a for _, a in r['curve']]}  {r['seconds']:.0f} s",
                  flush=True)
            print(draw(r["grid"]), flush=True)
    print(json.dumps({"benchmark": "guided_cross_attention", "threshold": args.threshold, "seed": args.seed,
                      "results": results}))


if __name__ == "__main__":
    main()
