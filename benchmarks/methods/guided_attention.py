"""Guided attention (Tachibana et al. 2017) with and without, on copy and numbers-de: steps to a diagonal
alignment and held-out exact match.

Alignment: every --every steps, the share of held-out target words whose most-attended source word (last
decoder layer, mean of heads: what the Train view draws) is the diagonal's (`diagonal_agreement`); steps to
alignment = the first check at >= --threshold (null: never). Copy wants a diagonal; numbers-de's German puts
units before tens, so the monotonic prior fights it. Last line: JSON.

    python benchmarks/methods/guided_attention.py [--steps 300] [--weight 1.0] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import time


def agreement(trainer, batch) -> float:
    import torch

    from tui_lab.train.guided_attention import diagonal_agreement
    from tui_lab.train.sources import IGNORE_INDEX

    model = trainer.model
    model.eval()
    with torch.no_grad():
        out = model.run(batch.inputs, batch.tgt_in, src_mask=batch.src_mask, need_weights=True)
    model.train()
    last = [a for a in out.attentions if a.kind == "cross"][-1].weights.mean(1)  # (N, T, S)
    return diagonal_agreement(last, batch.targets != IGNORE_INDEX, batch.src_mask)


def run(task: str, weight: float, args) -> dict:
    import torch

    from tui_lab import load_preset
    from tui_lab.data import load_task
    from tui_lab.train import Trainer, train_config_for

    c = train_config_for(task, steps=args.steps, eval_every=0, sample_every=0, eval_examples=args.eval_examples,
                         guided_attention=weight)
    trainer = Trainer(load_preset("transformer-2017-toy"), c, data=load_task(task))
    held_out = trainer.source.batch("val", 128, torch.Generator().manual_seed(1))
    curve, reached = [], None
    while trainer.step_count < c.steps:
        trainer.step()
        if trainer.step_count % args.every == 0:
            share = agreement(trainer, held_out)
            curve.append((trainer.step_count, round(share, 3)))
            if reached is None and share >= args.threshold:
                reached = trainer.step_count
    done = trainer.evaluate()
    return {"steps_to_alignment": reached, "final_agreement": curve[-1][1] if curve else None,
            "exact_match": round(done.exact_match, 4), "curve": curve}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--weight", type=float, default=1.0)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--eval-examples", type=int, default=300)
    parser.add_argument("--tasks", nargs="+", default=["copy", "numbers-de"])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    results: dict[str, dict] = {}
    for task in args.tasks:
        for weight in (0.0, args.weight):
            start = time.perf_counter()
            r = run(task, weight, args)
            results.setdefault(task, {})[f"guided_{weight:g}"] = r
            print(f"{task:10s} guided {weight:g}: steps to alignment {r['steps_to_alignment']}, diagonal agreement "
                  f"{[a for _, a in r['curve']]}, exact match {r['exact_match']:.3f}  "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    print(json.dumps({"benchmark": "guided_attention", "steps": args.steps, "weight": args.weight,
                      "threshold": args.threshold, "results": results}))


if __name__ == "__main__":
    main()
