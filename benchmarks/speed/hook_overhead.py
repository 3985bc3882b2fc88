"""What the hook points cost when nobody uses them: training steps and cached greedy generation, this tree
against the code before them (target: within 2%, median, interleaved A/B).

The baseline (`--baseline`, a git revision; default `main`, i.e. run on the branch before it merges) is unpacked with
`git archive` and renamed to the package `tui_lab_base`, so both versions live in one process and take turns
step by step: A (before), B (hook points, none attached) and B+hook (one reading hook attached: the cost when
used), in rotating order, so a machine getting busier or quieter weighs on all alike. Each builds gpt2-toy
with the same weights on one thread; a turn is one training step (forward, backward, AdamW; batch 8 x 64), one
cached greedy generation of `--new-tokens` tokens after a 16-token prompt (`generate`), or one cached decoding
step (`model.decode` of one token; many more samples, so the finest comparison). The summary is each side's
median and B / A. Last line: JSON.

    python benchmarks/speed/hook_overhead.py [--steps 200] [--generations 40] [--new-tokens 128] [--decode-rounds 20]
                                       [--baseline REV]
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this tree's tui_lab, whatever the environment has installed
BASELINE = "main"  # run on the hooks' branch before it merges (or name the revision before the hooks)
TARGET = 0.02


def unpack_baseline(revision: str, folder: Path) -> None:
    """The baseline's tui_lab as the package tui_lab_base (every `tui_lab` name rewritten), beside its presets."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tui_lab", "presets"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (folder / "tui_lab").rename(folder / "tui_lab_base")
    for path in (folder / "tui_lab_base").rglob("*.py"):
        path.write_text(re.sub(r"\btui_lab\b", "tui_lab_base", path.read_text(encoding="utf-8")), encoding="utf-8")


def build(package: str, state: dict | None = None):
    lab = importlib.import_module(package)
    model = lab.build_model(lab.load_preset("gpt2-toy"))
    if state is not None:
        model.load_state_dict(state)
    return model


def train_step(model, opt, x) -> float:
    t = time.perf_counter()
    logits = model(x[:, :-1])
    F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten()).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return time.perf_counter() - t


def measure(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    b = build("tui_lab")
    assert importlib.import_module("tui_lab").__file__.startswith(str(ROOT))
    models = {"A": build("tui_lab_base", b.state_dict()), "B": b, "B+hook": build("tui_lab", b.state_dict())}
    from tui_lab.generation import generate
    from tui_lab.model.hooks import Hooks

    models["B+hook"].hooks = Hooks([("blocks.1.hook_resid_post", lambda v, _: None)])
    base_generate = importlib.import_module("tui_lab_base.generation").generate
    generators = {"A": base_generate, "B": generate, "B+hook": generate}
    x = torch.randint(0, b.config.vocab, (8, 65), generator=torch.Generator().manual_seed(1))
    names = list(models)
    times: dict[str, dict[str, list[float]]] = {n: {"train_step_s": [], "generate_s": []} for n in names}
    opts = {n: torch.optim.AdamW(m.parameters(), lr=1e-4) for n, m in models.items()}
    for m in models.values():
        m.train()
    for i in range(args.steps + 3):
        for name in names[i % 3:] + names[:i % 3]:  # rotating order
            took = train_step(models[name], opts[name], x)
            if i >= 3:  # the first steps warm the allocator and the optimizer state
                times[name]["train_step_s"].append(took)
    prompt = x[:1, :16]
    for m in models.values():
        m.eval()
    for i in range(args.generations + 1):
        for name in names[i % 3:] + names[:i % 3]:
            t = time.perf_counter()
            out = generators[name](models[name], prompt, args.new_tokens, temperature=0.0)
            if i >= 1:
                times[name]["generate_s"].append(time.perf_counter() - t)
            assert out.shape[1] == 16 + args.new_tokens
    for name in names:
        times[name]["decode_step_s"] = []
    with torch.inference_mode():
        for r in range(args.decode_rounds):  # one cached decoding step at a time, the three taking turns
            caches = {n: m.new_cache(1, 16 + args.new_tokens) for n, m in models.items()}
            tokens = {n: m.decode(prompt, cache=caches[n])[:, -1:].argmax(-1) for n, m in models.items()}
            for i in range(args.new_tokens - 1):
                for name in names[(r + i) % 3:] + names[:(r + i) % 3]:
                    t = time.perf_counter()
                    tokens[name] = models[name].decode(tokens[name], cache=caches[name])[:, -1:].argmax(-1)
                    times[name]["decode_step_s"].append(time.perf_counter() - t)
    return {n: {key: statistics.median(v) for key, v in t.items()} for n, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--generations", type=int, default=40)
    parser.add_argument("--new-tokens", dest="new_tokens", type=int, default=128)
    parser.add_argument("--decode-rounds", dest="decode_rounds", type=int, default=20,
                        help="cached decoding steps timed one by one, in turns: rounds of --new-tokens steps")
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision before the hooks (default {BASELINE})")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        unpack_baseline(args.baseline, Path(tmp))
        sys.path.insert(0, tmp)
        summary = measure(args)
    ratios = {key: summary["B"][key] / summary["A"][key] for key in summary["A"]}
    hooked = {key: summary["B+hook"][key] / summary["A"][key] for key in summary["A"]}
    for key in summary["A"]:
        print(f"{key}: A (before hooks) {summary['A'][key] * 1e3:.3f} ms, B (hook points, none attached) "
              f"{summary['B'][key] * 1e3:.3f} ms, B/A {ratios[key]:.4f} (target at most {1 + TARGET:.2f}); "
              f"one reading hook attached {hooked[key]:.4f}")
    print(json.dumps({"baseline": args.baseline, "median": summary, "b_over_a": ratios, "hooked_over_a": hooked,
                      "within_target": all(r <= 1 + TARGET for r in ratios.values()), "cpu": _cpu(),
                      "torch": torch.__version__, "steps": args.steps, "generations": args.generations}))
    return 0


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
