"""Scheduled sampling (Bengio et al. 2015) vs teacher forcing: held-out exact match per schedule.

On `reverse-long` (reverse with 12..20 words, benchmarks/methods/seq2seq_common.py) and numbers-de, on
transformer-2017-toy with each task's default settings except --steps. Each schedule's rate is the default
fitted to the run's length (tui_lab/train/scheduled_sampling.py). Last line: JSON.

    python benchmarks/methods/scheduled_sampling.py [--steps 300] [--threads 1] [--tasks reverse-long numbers-de]
"""

from __future__ import annotations

import argparse
import json
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--eval-examples", type=int, default=300)
    parser.add_argument("--tasks", nargs="+", default=["reverse-long", "numbers-de"])
    parser.add_argument("--schedules", nargs="+", default=["none", "linear", "exponential", "inverse_sigmoid"])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    from seq2seq_common import task_data, train_config

    from tui_lab import load_preset
    from tui_lab.train import Trainer

    results: dict[str, dict[str, float]] = {}
    for task in args.tasks:
        data = task_data(task)
        for schedule in args.schedules:
            c = train_config(task, steps=args.steps, eval_every=0, sample_every=0, eval_examples=args.eval_examples,
                             scheduled_sampling=schedule)
            start = time.perf_counter()
            done = Trainer(load_preset("transformer-2017-toy"), c, data=data).run()
            results.setdefault(task, {})[schedule] = round(done.exact_match, 4)
            print(f"{task:12s} {schedule:16s} exact match {done.exact_match:.3f}  val loss {done.val_loss:.4f}  "
                  f"{time.perf_counter() - start:.0f} s  load {os.getloadavg()[0]:.1f}", flush=True)
    print(json.dumps({"benchmark": "scheduled_sampling", "steps": args.steps, "exact_match": results}))


if __name__ == "__main__":
    main()
