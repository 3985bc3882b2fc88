"""numbers-de on transformer-2017-toy with the task's default settings: exact match on held-out numbers.

Target (issue 3): exact match >= 0.98 in under 3 minutes on 2 CPU cores. Prints one line per seed and the
machine load, since wall-clock times on a shared machine are inflated.

    python benchmarks/training/train_numbers_de.py [--seeds 0 1 2] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)  # a script may set threads; the library never does
    from tui_lab import load_preset
    from tui_lab.train import Trainer, train_config_for

    config = train_config_for("numbers-de")
    print(f"defaults: steps {config.steps}, batch {config.batch_size}, {config.schedule} lr {config.lr} "
          f"warmup {config.warmup}, label smoothing {config.label_smoothing}; threads {args.threads}")
    for seed in args.seeds:
        start = time.perf_counter()
        done = Trainer(load_preset("transformer-2017-toy"), config.replace(seed=seed)).run()
        seconds = time.perf_counter() - start
        print(f"seed {seed}: exact match {done.exact_match:.3f} on held-out numbers, val loss {done.val_loss:.4f}, "
              f"{seconds:.1f} s wall, {done.tokens_per_s:,.0f} target tokens/s, load {os.getloadavg()[0]:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
