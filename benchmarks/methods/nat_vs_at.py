"""NAT vs AT (seed 002 section 3.2): held-out exact match and decode time per sequence, same training steps.

For each task (numbers-de, copy, reverse) trains transformer-2017-toy three times with the task's default
settings and steps, once per decoder_mode (autoregressive, nat-length-classifier, nat-max-length), then
reports the trainer's exact match (greedy, the task's held-out split) and the time to decode one held-out
source at a time (batch 1, greedy, the way a person generates), with the decoder passes it took. The seed
predicts NAT is faster (one decoder pass) and worse. One line per run as it finishes, the last line JSON.

    python benchmarks/methods/nat_vs_at.py [--tasks numbers-de copy reverse] [--steps N] [--decode 100] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time

MODES = ("autoregressive", "nat-length-classifier", "nat-max-length")


def decode_time(model, task, count: int) -> tuple[float, float]:
    """Mean seconds and mean decoder passes per held-out sequence, decoded alone (greedy)."""
    import torch

    from tui_lab.generation import generate

    tok, passes, seconds = task.tokenizer, [], 0.0
    for src, _ in task.val[:count]:
        x = torch.tensor([src], dtype=torch.long)
        steps: list[int] = []
        start = time.perf_counter()
        generate(model, x, task.max_target_len, temperature=0.0, bos_id=tok.bos_id, eos_id=tok.eos_id,
                 on_step=lambda s, steps=steps: steps.append(s.passes))
        seconds += time.perf_counter() - start
        passes.append(steps[-1])
    return seconds / count, sum(passes) / count


def run(task_name: str, mode: str, steps: int | None, decode: int, seed: int) -> dict:
    from tui_lab import load_preset
    from tui_lab.data.tasks import load_task
    from tui_lab.train import Trainer, train_config_for

    task = load_task(task_name)
    config = train_config_for(task_name, seed=seed, eval_every=0, sample_every=0, steps=steps)
    start = time.perf_counter()
    trainer = Trainer(load_preset("transformer-2017-toy", decoder_mode=mode), config, data=task)
    done = trainer.run()
    train_s = time.perf_counter() - start
    per_seq, passes = decode_time(trainer.model, task, decode)
    return {"task": task_name, "mode": mode, "steps": config.steps, "exact_match": done.exact_match,
            "val_loss": done.val_loss, "decode_ms_per_seq": 1000 * per_seq, "decoder_passes_per_seq": passes,
            "train_s": train_s, "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", nargs="+", default=["numbers-de", "copy", "reverse"])
    parser.add_argument("--modes", nargs="+", default=list(MODES))
    parser.add_argument("--steps", type=int, default=None, help="default: each task's default steps")
    parser.add_argument("--decode", type=int, default=100, help="held-out sequences timed one at a time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)  # a script may set threads; the library never does
    results = []
    for task in args.tasks:
        for mode in args.modes:
            r = run(task, mode, args.steps, args.decode, args.seed)
            results.append(r)
            print(f"{task:10} {mode:22} {r['steps']} steps: exact match {r['exact_match']:.3f}, "
                  f"decode {r['decode_ms_per_seq']:.2f} ms/seq in {r['decoder_passes_per_seq']:.1f} decoder passes "
                  f"(train {r['train_s']:.0f} s, load {r['load']:.1f})", flush=True)
    print(json.dumps({"benchmark": "nat_vs_at", "threads": args.threads, "results": results}))


if __name__ == "__main__":
    main()
