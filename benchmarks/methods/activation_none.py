"""An FFN without activation vs with ReLU, same task, same seed: seed 002's Q&A on why the nonlinearity matters.

transformer-2017-toy (ReLU) and the same with activation=none, trained with the task's defaults except --steps;
prints the final train/val loss, held-out exact match, and the collapsed FFN's rank (tui_lab.model.ffn_rank).
A person reproduces each curve with

    tui-lab train --task numbers-de --steps 300 [--set activation=none] --json

and overlays the two in the app's Train view (train twice, press v). Last line: JSON.

    python benchmarks/methods/activation_none.py [--task numbers-de] [--steps 300] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="numbers-de")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from tui_lab import load_preset
    from tui_lab.model.ffn_rank import ffn_ranks
    from tui_lab.train import Trainer, train_config_for

    results = {}
    for activation in ("relu", "none"):
        c = train_config_for(args.task, steps=args.steps, eval_every=100, sample_every=0)
        events = []
        start = time.perf_counter()
        trainer = Trainer(load_preset("transformer-2017-toy", activation=activation), c, on_event=events.append)
        done = trainer.run()
        curve = [(e.step, round(e.train_loss, 4)) for e in events if e.kind == "step"][:: max(1, args.steps // 10)]
        r = {"train_loss": round(done.train_loss, 4), "val_loss": round(done.val_loss, 4),
             "exact_match": round(done.exact_match, 4), "train_curve": curve}
        if activation == "none":
            ranks = ffn_ranks(trainer.model)
            r["ffn_rank"] = [x.rank for x in ranks]
            r["ffn_effective_rank"] = [round(x.effective_rank, 1) for x in ranks]
        results[activation] = r
        print(f"activation {activation:5s}: train loss {r['train_loss']}, val loss {r['val_loss']}, exact match "
              f"{r['exact_match']:.3f}  {time.perf_counter() - start:.0f} s", flush=True)
    print(json.dumps({"benchmark": "activation_none", "task": args.task, "steps": args.steps, "results": results}))


if __name__ == "__main__":
    main()
