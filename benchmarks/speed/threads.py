"""Does the per-call thread choice (tui_lab/cpu_threads.py, issue 39) pick a count as fast as the best one,
quiet and beside busy processes?

Two workloads: cached greedy generation of a toy (gpt2-toy-english's shape, random weights, a 16-token
prompt, --new-tokens new ones) and one training step (gpt2-toy's shape, forward + backward + AdamW on a
random --batch x --seq-len batch). Three conditions: quiet (nothing of ours beside it), beside one busy
process and beside two (each a separate process multiplying 256 x 256 matrices on 1 thread, forever). In
each condition every thread count (1, 2, 4, ... up to the cores) runs in interleaved repeats, each repeat in
another order (the orders of the counts in turn) and after a short pause (a previous count's OpenMP workers
spin for a moment after their last op: the count run next would pay for it), so load that comes and goes
weighs on all alike. At the start of each repeat the library chooses, as `complete` and the trainer do at a
call (the load read then, nothing of the benchmark running). Training: that repeat's time for the chosen count
is the chosen time. (A separate "chosen" arm running the same count as another arm differed from it by up to
1.3x at load 16-19: the noise of a shared machine, not the choice; so the chosen time is read from the counts'
own runs. A chosen count that is not among them, 3 of 4 cores, runs as one more arm in that repeat.)
Generation: the library's plan (`threads.decode_plan`: the prefill's count, and the steps' count, tried over the
first steps of each run where the rule cannot tell from the op sizes) is not one count, so it runs as its own
arm, in the rotation with the counts, each generation with its own trial as a person's call has.

The checks compare within a repeat, where the counts ran a moment apart under the same load: each repeat gives a
paired ratio (the chosen count's time over each count's), and the check reads the median of those ratios over
the repeats: the chosen count within 10% of every count (so of the best), and its speed never below 0.8x one
thread's. Medians of each count's own times, compared afterwards, mixed load that came and went between repeats
into the comparison: quiet generation once failed with 1 and 2 threads ±17-24% apart on a shared 2-core machine.
Each timed run repeats the workload until it lasts at least --min-timed-s (measured on one thread at the
warm-up), so a run of a few milliseconds is not one scheduler timeslice. Per condition: the median seconds
per count (per workload run), the counts chosen, the median paired ratios and the two checks. The machine's
load averages are printed beside each condition (on a shared machine "quiet" means only that this benchmark
adds nothing).

    python benchmarks/speed/threads.py [--repeats 12] [--min-timed-s 0.3] [--new-tokens 32] [--batch 16]
                                       [--seq-len 64] [--conditions quiet busy1 busy2] [--json]

Last line with --json: one JSON object. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import torch

from tui_lab import build_model
from tui_lab.cpu_threads import ceiling_threads, choose, load_now, op_grain
from tui_lab.generation import generate
from tui_lab.generation.threads import DecodePlan, decode_plan, torch_threads
from tui_lab.presets import load_preset

BUSY = ("import sys, torch\ntorch.set_num_threads(1)\na = torch.randn(256, 256)\nprint('ready', flush=True)\n"
        "while True:\n    a = torch.tanh(a @ a)\n")
SETTLE_S = 0.05  # the pause before each timed run
WITHIN, FLOOR = 1.10, 0.8  # chosen median <= 1.1x the best count's; chosen speed >= 0.8x one thread's


class Busy:
    """`n` separate processes, each a CPU-bound loop on 1 thread; ready once each has imported torch."""

    def __init__(self, n: int) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.procs = [subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True, env=env)
                      for _ in range(n)]
        for proc in self.procs:
            proc.stdout.readline()

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


class Workload:
    """`run()` once on torch's count; `choose()` the library's choice now; `run_chosen(choice)`, where a choice is
    not one count (a generation's plan), runs once on it and says the count its steps settled on, else None."""

    def __init__(self, run: Callable[[], None], choose: Callable[[], object],
                 run_chosen: Callable[[object], int] | None = None) -> None:
        self.run, self.choose, self.run_chosen = run, choose, run_chosen


def generation_workload(new_tokens: int) -> Workload:
    """Cached greedy decoding of the English toy's shape, chosen as `complete` does (a 16-token prompt)."""
    torch.manual_seed(0)
    model = build_model(load_preset("gpt2-toy-english")).eval()
    prompt = torch.randint(model.config.vocab, (1, 16), generator=torch.Generator().manual_seed(0))

    def run(plan: DecodePlan | None = None) -> None:
        with torch.inference_mode():
            generate(model, prompt, new_tokens, temperature=0.0, plan=plan)

    def run_chosen(plan: object) -> int:
        assert isinstance(plan, DecodePlan)
        fresh = DecodePlan(plan.prefill, plan.steps)  # its own trial, as each call of `complete` has
        run(fresh)
        return fresh.threads

    return Workload(run, lambda: decode_plan(model, use_cache=True, prompt_tokens=prompt.shape[1]), run_chosen)


def training_workload(batch: int, seq_len: int) -> Workload:
    """One training step of gpt2-toy's shape, chosen as `TrainThreads` does."""
    torch.manual_seed(0)
    config = load_preset("gpt2-toy")
    model = build_model(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(config.vocab, (batch, seq_len + 1), generator=torch.Generator().manual_seed(0))
    ceiling = ceiling_threads()

    def run() -> None:
        logits = model(x[:, :-1])
        logits = logits[0] if isinstance(logits, tuple) else logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), x[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return Workload(run, lambda: choose(op_grain(config, batch * seq_len), ceiling, "TUI_LAB_TRAIN_THREADS"))


def counts(ceiling: int) -> list[int]:
    out, n = [], 1
    while n < ceiling:
        out.append(n)
        n *= 2
    return out + [ceiling]


CHOSEN = 0  # the arm key of a chosen plan run as its own arm (counts are 1 and up)


def measure(work: Workload, repeats: int, ceiling: int, min_timed_s: float) -> dict:
    """Interleaved repeats of each count (every order of the arms in turn); the library's choice at the start
    of each repeat picks that repeat's chosen time (or runs as its own arm); the checks read the median of the
    per-repeat ratios."""
    arms = counts(ceiling)
    for n in arms:  # a warm-up per count: first-call allocation and thread start are not timed
        with torch_threads(n):
            work.run()
    if work.run_chosen is not None:
        work.run_chosen(work.choose())
    with torch_threads(1):
        start = time.perf_counter()
        work.run()
        inner = max(1, math.ceil(min_timed_s / (time.perf_counter() - start)))  # runs per timed region
    per_repeat: list[dict[int, float]] = []  # each repeat's seconds per workload run, by count (CHOSEN: the plan)
    chosen: list[int] = []  # the count chosen (a plan: the count its last run's steps settled on)
    orders = list(itertools.permutations(arms + ([CHOSEN] if work.run_chosen is not None else [])))
    for r in range(repeats):
        choice = work.choose()  # read before any clock, as the library's callers do
        count = min(choice.threads, ceiling)
        extra = () if work.run_chosen is not None or count in arms else (count,)
        seconds: dict[int, float] = {}
        for arm in orders[r % len(orders)] + extra:
            with torch_threads(arm or None):
                time.sleep(SETTLE_S)
                start = time.perf_counter()
                for _ in range(inner):
                    settled = work.run_chosen(choice) if arm == CHOSEN else work.run()
                seconds[arm] = (time.perf_counter() - start) / inner
            if arm == CHOSEN:
                count = settled
        chosen.append(count)
        per_repeat.append(seconds)
    names = {CHOSEN: "plan"}
    times = {names.get(a, str(a)): [s[a] for s in per_repeat if a in s]
             for a in sorted({a for s in per_repeat for a in s})}
    chosen_s = [s[CHOSEN if work.run_chosen is not None else c] for s, c in zip(per_repeat, chosen, strict=True)]
    medians = {arm: statistics.median(t) for arm, t in times.items()}
    medians["chosen"] = statistics.median(chosen_s)
    # paired: chosen / count within each repeat, then the median over repeats
    paired = {str(a): statistics.median(c / s[a] for s, c in zip(per_repeat, chosen_s, strict=True)) for a in arms}
    best = max(paired, key=paired.get)  # the count the chosen one is slowest against (the best one)
    speed_vs_one = 1 / paired["1"]
    return {"median_s": medians, "times_s": times, "chosen_counts": chosen, "runs_per_timed_region": inner,
            "paired_chosen_over_count": paired, "best_count": int(best), "vs_best": paired[best],
            "speed_vs_one": speed_vs_one, "within_10pct": paired[best] <= WITHIN, "at_least_08x_one":
            speed_vs_one >= FLOOR}


def line(condition: str, workload: str, result: dict, loads: tuple) -> str:
    per = ", ".join(f"{a}{' thread(s)' if a.isdigit() else ''} {s:.4f} s" for a, s in result["median_s"].items())
    pairs = ", ".join(f"/{a}: {r:.2f}" for a, r in result["paired_chosen_over_count"].items())
    ok = result["within_10pct"] and result["at_least_08x_one"]
    return (f"{'PASS' if ok else 'FAIL'} {condition:6s} {workload:8s} load {loads[0]:.2f} -> {loads[1]:.2f}: {per} "
            f"(x{result['runs_per_timed_region']} per timed run); chosen {result['chosen_counts']}; median paired "
            f"chosen {pairs}; worst against {result['best_count']}: {result['vs_best']:.2f}x (<= {WITHIN:.2f}), "
            f"speed vs 1 thread {result['speed_vs_one']:.2f}x (>= {FLOOR})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=12, help="an even number: each order of 2 counts as often")
    parser.add_argument("--min-timed-s", type=float, default=0.3,
                        help="each timed run repeats the workload to last at least this (default 0.3 s)")
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--conditions", nargs="+", default=["quiet", "busy1", "busy2"],
                        choices=["quiet", "busy1", "busy2"])
    parser.add_argument("--json", action="store_true", help="one JSON object as the last line")
    args = parser.parse_args()
    ceiling = ceiling_threads()
    workloads = {"generate": generation_workload(args.new_tokens), "train": training_workload(args.batch, args.seq_len)}
    print(f"torch {torch.__version__}, {ceiling} cores usable, counts {counts(ceiling)}, {args.repeats} repeats; "
          f"load now {load_now()}", flush=True)
    report, failed = {}, False
    for condition in args.conditions:
        busy = Busy({"quiet": 0, "busy1": 1, "busy2": 2}[condition])
        try:
            for name, work in workloads.items():
                before = os.getloadavg()[0]
                result = measure(work, args.repeats, ceiling, args.min_timed_s)
                result["load_before_after"] = (before, os.getloadavg()[0])
                report[f"{condition}/{name}"] = result
                failed |= not (result["within_10pct"] and result["at_least_08x_one"])
                print(line(condition, name, result, result["load_before_after"]), flush=True)
        finally:
            busy.stop()
    print("PASS: every condition" if not failed else "FAIL: see the lines above", flush=True)
    if args.json:
        print(json.dumps({"ceiling": ceiling, "repeats": args.repeats, "results": report, "pass": not failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
