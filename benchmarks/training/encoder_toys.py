"""The encoder toys with their defaults: `tui-lab train --preset bert-toy` and `--preset vit-toy`, as run.

Each run is the CLI itself in a child process (`--json`, nothing but the preset given), so the numbers are
those of the shipped defaults. It reports the final held-out accuracy beside the baselines (bert-toy: the
masked-token accuracy, always answering the most frequent character, a unigram draw; vit-toy: accuracy and
the majority class), the child's CPU time (user + sys, what a shared machine does not inflate) and wall
time. Prints one line per toy, then a JSON line with the numbers. On a machine whose cores are shared,
two threads spin waiting for each other and their CPU time grows with the load; `--threads 1` measures the
work itself (bert-toy's 300 steps took 78 CPU-seconds at one thread, several times that at two under load ~9).

    python benchmarks/training/encoder_toys.py [--threads 2] [--only bert-toy|vit-toy] [--set FIELD=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOYS = {"bert-toy": ("masked_accuracy", "baseline_accuracy", "unigram_accuracy"),
        "vit-toy": ("accuracy", "baseline_accuracy")}


def train(preset: str, threads: int, sets: list[str]) -> dict:
    """One `tui-lab train --preset PRESET --json` in a child; its done line, CPU and wall seconds."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    command = [sys.executable, "-m", "tui_lab.cli", "train", "--preset", preset, "--json", "--device", "cpu"]
    command += [arg for item in sets for arg in ("--set", item)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    done = next((e for e in reversed(lines) if e.get("event") == "done"), None)
    if result.returncode != 0 or done is None:
        raise SystemExit(f"{preset}: the run failed (exit {result.returncode}): {result.stderr.strip()[-400:]}")
    curve = {e["step"]: round(e[TOYS[preset][0]], 4) for e in lines if e.get("event") == "eval"}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = {"preset": preset, "steps": done["step"], **{k: round(done[k], 4) for k in TOYS[preset]},
           "curve": curve, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1)}
    shown = ", ".join(f"{k} {row[k]:.3f}" for k in TOYS[preset])
    print(f"{preset}: {shown} after {row['steps']} steps; {row['cpu_s']} CPU s, {row['wall_s']} s wall", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", choices=sorted(TOYS))
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE",
                        help="passed to `tui-lab train` (to try a default before changing it)")
    args = parser.parse_args()
    rows = [train(name, args.threads, args.sets) for name in TOYS if args.only in (None, name)]
    print(json.dumps({"threads": args.threads, "load": round(os.getloadavg()[0], 2), "sets": args.sets,
                      "runs": rows}))


if __name__ == "__main__":
    main()
