"""What the hook points cost when nobody uses them: training steps and cached greedy generation, this tree
against the code before them (target: within 2%, median, interleaved A/B).

Each round starts two child processes, one importing the baseline (`--baseline`, a git revision unpacked with
`git archive` into a temporary folder), one this tree, in alternating order (A B, then B A) so that a machine
getting busier or quieter weighs on both alike. A child builds gpt2-toy (random weights, seed 0) on one thread
and times `--steps` training steps (forward, backward, AdamW) and `--repeats` cached greedy generations of
`--new-tokens` tokens after a 16-token prompt; it reports the median of each. The summary is the median over
the rounds of each side, and B / A. A third column times this tree with one reading hook attached (the cost
when used: the pass then runs the hooked block code and attention's explicit path at that layer). Last line: JSON.

    python benchmarks/hook_overhead.py [--rounds 6] [--steps 30] [--repeats 5] [--new-tokens 128] [--baseline REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "cab6d74"  # the last commit before the hook points (issue 28)
TARGET = 0.02

CHILD = r"""
import json, statistics, sys, time
import torch
import torch.nn.functional as F
torch.set_num_threads(1)
from tui_lab import build_model, load_preset
from tui_lab.generation import generate

steps, repeats, new_tokens, hooked = (int(a) for a in sys.argv[1:5])
torch.manual_seed(0)
model = build_model(load_preset("gpt2-toy"))
if hooked:
    from tui_lab.model.hooks import Hooks
    model.hooks = Hooks([("blocks.1.hook_resid_post", lambda v, _: None)])
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randint(0, model.config.vocab, (8, 65), generator=torch.Generator().manual_seed(1))
train = []
model.train()
for i in range(steps + 3):
    t = time.perf_counter()
    logits = model(x[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if i >= 3:  # the first steps warm the allocator and the optimizer state
        train.append(time.perf_counter() - t)
model.eval()
prompt = x[:1, :16]
gen = []
for i in range(repeats + 1):
    t = time.perf_counter()
    generate(model, prompt, new_tokens, temperature=0.0)
    if i >= 1:
        gen.append(time.perf_counter() - t)
import tui_lab
assert tui_lab.__file__.startswith(sys.argv[5]), tui_lab.__file__  # the tree asked for, not the venv's install
print(json.dumps({"train_step_s": statistics.median(train), "generate_s": statistics.median(gen)}))
"""


def run_child(tree: Path, args: argparse.Namespace, hooked: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    argv = [str(args.steps), str(args.repeats), str(args.new_tokens), str(int(hooked)), str(tree)]
    out = subprocess.run([sys.executable, "-c", CHILD, *argv], env=env, capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def unpack(revision: str, folder: Path) -> Path:
    """The baseline's tui_lab and presets, as they were at `revision`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tui_lab", "presets"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--new-tokens", dest="new_tokens", type=int, default=128)
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision before the hooks (default {BASELINE})")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = unpack(args.baseline, Path(tmp))
        sides: dict[str, list[dict]] = {"A": [], "B": [], "B+hook": []}
        for r in range(args.rounds):
            order = [("A", baseline), ("B", ROOT)] if r % 2 == 0 else [("B", ROOT), ("A", baseline)]
            for name, tree in order:
                sides[name].append(run_child(tree, args))
            sides["B+hook"].append(run_child(ROOT, args, hooked=True))
            print(f"round {r + 1}: " + "  ".join(
                f"{n} train {s[-1]['train_step_s'] * 1e3:.2f} ms gen {s[-1]['generate_s'] * 1e3:.1f} ms"
                for n, s in sides.items()), flush=True)
    summary = {name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
               for name, runs in sides.items()}
    ratios = {key: summary["B"][key] / summary["A"][key] for key in summary["A"]}
    hooked = {key: summary["B+hook"][key] / summary["A"][key] for key in summary["A"]}
    for key in summary["A"]:
        print(f"{key}: A (before hooks) {summary['A'][key] * 1e3:.3f} ms, B (hook points, none attached) "
              f"{summary['B'][key] * 1e3:.3f} ms, B/A {ratios[key]:.4f} (target within {TARGET:.0%}); "
              f"one reading hook attached {hooked[key]:.4f}")
    ok = all(r <= 1 + TARGET for r in ratios.values())  # faster is within target too
    print(json.dumps({"baseline": args.baseline, "rounds": args.rounds, "median": summary, "b_over_a": ratios,
                      "hooked_over_a": hooked, "within_target": ok, "cpu": _cpu()}))
    return 0


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
