"""One prepared check of every path that runs on a device: the families, training, generation, MFU, the app.

For the device it is given, each check appends one JSON line as it finishes (to stdout and to `--out`),
then a summary line; the exit code is 1 if any check failed (2: the device is not there). A GPU box
rented for an hour runs it once before anything else:

    python benchmarks/gpu/gpu_check.py --device cuda --out gpu-check.jsonl      # ~2-3 minutes on one GPU
    python benchmarks/gpu/gpu_check.py --device cpu --smoke                      # small sizes, <= 60 s: CI

Every line: {"check", "device", "ok" (true / false / null for skipped), "seconds", ...what it measured},
and "error" (one line) where a check failed. The checks, in order (`--only` picks sections):
- families: every preset; the big ones counted on the meta device (== the analysis' count), each toy and
  shipped toy built on the device, one forward pass (finite, the shape expected, == the CPU's logits) and,
  for the causal ones and the encoder-decoder, cached == uncached greedy ids;
- train: each toy 50 steps, last-10 mean loss <= 0.9x the first 10, in fp32 and (where the device has fast
  bf16) under bf16 autocast, whose step-50 loss is within 0.05 nats of fp32's; tokens/s of both;
- hf: the training step against transformers' GPT2LMHeadModel on the same weights (losses within 1e-3 at
  every step, ours at least 0.5x its tokens/s), our cached generation against GPT2LMHeadModel.generate (the
  same ids, or parting only at a near-tie: top-2 logits within 1e-4);
- cache: cached vs uncached greedy at 240 new tokens (gpt2-toy) and 1,024 (gpt2-toy with max_len 1,040): the
  same ids, no sliding window; the speedup reported;
- mfu: the lab's measured matmul peak (fp32, bf16; at most 1.1x the vendor's published figure, printed
  beside it) and the MFU of a GPT-2 small run against each (0 < MFU <= 1);
- app: the app headless (Pilot) on the device: Attention, a short Train run (its weights become the live
  model), Generate, Speed, and in-app vs headless training tokens/s (>= 0.5 on a GPU); skipped, not failed,
  where the app's packages are not installed.
The smoke (`--smoke`): the toys shrunk to d_model 32, small batches, one CPU thread, bf16 on gpt2-toy only,
no headless twin of the app's run, gpt2-toy for MFU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

# The sibling checks, and the benchmarks of other rooms they reuse (agreement with transformers, speed, the
# interface's latency probe), run from anywhere.
for room in ("interface", "speed", "agreement", "gpu"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / room))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the source tree, before an installed copy

SECTIONS = ("families", "train", "hf", "cache", "mfu", "app")


@dataclass(frozen=True)
class Sizes:
    """How big each check runs: the full sizes for a GPU, small ones for the CPU smoke."""

    smoke: bool
    shrink: dict[str, int]  # overrides applied to every toy (the smoke's small sizes)
    train_steps: int = 50
    lm_batch: int = 32
    seq_len: int = 128
    gen_tokens: int = 64  # cached == uncached per family
    hf_gen_tokens: int = 240
    cache_lengths: tuple[int, int] = (240, 1024)
    repeats: int = 3
    mfu_preset: str = "gpt2-small"
    mfu_batch: int = 8
    mfu_seq: int = 512
    mfu_steps: int = 10
    app_steps: int = 20
    bf16_only: tuple[str, ...] = ()  # the toys trained in bf16 too (empty: every toy)


FULL = Sizes(smoke=False, shrink={}, repeats=2)
SMOKE = Sizes(smoke=True, shrink=dict(d_model=32, heads=2, d_ff=64), lm_batch=8, seq_len=16, gen_tokens=12,
              hf_gen_tokens=24, cache_lengths=(24, 64), repeats=1, mfu_preset="gpt2-toy", mfu_batch=4, mfu_seq=32,
              mfu_steps=4, app_steps=6, bf16_only=("gpt2-toy",))


class Recorder:
    """Appends one JSON line per check to stdout and the --out file, flushed at once (a run that dies
    midway keeps every line it finished)."""

    def __init__(self, device: str, out: TextIO | None) -> None:
        self.device, self.out = device, out
        self.lines: list[dict[str, Any]] = []
        self.started = time.perf_counter()

    def write(self, line: dict[str, Any]) -> None:
        line = {"check": line.pop("check"), "device": self.device, **line}
        text = json.dumps(line, default=_plain)
        for stream in (sys.stdout, self.out):
            if stream is not None:
                stream.write(text + "\n")
                stream.flush()
        self.lines.append(line)

    def run(self, name: str, check: Callable[[], dict[str, Any] | Iterator[dict[str, Any]]]) -> None:
        """Run one check (a function returning a line, or a generator of lines); an exception is a failed
        line with the error in one line, never the end of the run."""
        start = time.perf_counter()
        try:
            result = check()
            for line in [result] if isinstance(result, dict) else result:
                self.passed(line.pop("check", name), line, start)
                start = time.perf_counter()
        except Exception as err:  # noqa: BLE001 - a failed check is a line, and the next check still runs
            self.failed(name, err, start)

    def passed(self, name: str, line: dict[str, Any], start: float) -> None:
        """A check's own line (its "ok" says whether it passed), timed from `start`."""
        self.write({"check": name, "ok": line.pop("ok"), "seconds": round(time.perf_counter() - start, 3), **line})

    def failed(self, name: str, err: BaseException, start: float) -> None:
        """The line of a check that raised: its error in one line (running out of memory names the device)."""
        from tui_lab.devices import out_of_memory_line, release_cached_memory
        from tui_lab.errors import one_line

        release_cached_memory(self.device)
        error = out_of_memory_line(err, self.device, name) or f"{type(err).__name__}: {one_line(err)}"
        self.write({"check": name, "ok": False, "seconds": round(time.perf_counter() - start, 3), "error": error})

    def summary(self) -> dict[str, Any]:
        failed = [line["check"] for line in self.lines if line["ok"] is False]
        skipped = [line["check"] for line in self.lines if line["ok"] is None]
        line = {"check": "summary", "ok": not failed, "passed": sum(line["ok"] is True for line in self.lines),
                "failed": len(failed), "skipped": len(skipped), "failures": failed,
                "seconds": round(time.perf_counter() - self.started, 1)}
        self.write(line)
        return line


def _plain(value: Any) -> Any:
    """JSON for what json does not know (a torch dtype, a Path, a numpy number)."""
    return value.item() if hasattr(value, "item") else str(value)


def machine(device: str) -> dict[str, Any]:
    """The first line: what ran where (torch, the device's name and memory, the CPU, threads)."""
    import platform

    import torch

    from tui_lab.hardware import device_name

    line: dict[str, Any] = {"check": "machine", "ok": True, "name": device_name(device),
                            "torch": torch.__version__, "python": platform.python_version(),
                            "threads": torch.get_num_threads(), "cuda": torch.version.cuda}
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        line |= {"memory_bytes": props.total_memory, "capability": f"{props.major}.{props.minor}",
                 "devices": torch.cuda.device_count()}
    return line


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cpu, cuda, cuda:N or mps (default cuda)")
    parser.add_argument("--out", type=Path, help="also append the JSON lines to this file")
    parser.add_argument("--smoke", action="store_true", help="small sizes (the CPU run in CI)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run these sections (default: all)")
    parser.add_argument("--threads", type=int, help="torch's CPU threads (the smoke uses 1: see the README)")
    return parser.parse_args(argv)


def sections(sizes: Sizes) -> dict[str, Callable[[Recorder, str, Sizes], None]]:
    import gpu_check_app
    import gpu_check_generate
    import gpu_check_models
    import gpu_check_train

    return {"families": gpu_check_models.run, "train": gpu_check_train.run_toys, "hf": gpu_check_generate.run_hf,
            "cache": gpu_check_generate.run_cache, "mfu": gpu_check_train.run_mfu, "app": gpu_check_app.run}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    sizes = SMOKE if args.smoke else FULL
    out = args.out.open("a", encoding="utf-8") if args.out else None
    try:
        return _run(args, sizes, out)
    finally:
        if out is not None:
            out.close()


def _run(args: argparse.Namespace, sizes: Sizes, out: TextIO | None) -> int:
    from tui_lab.devices import pick_device

    recorder = Recorder(args.device, out)
    try:
        device = pick_device(args.device, field="--device")
    except ValueError as err:  # `cuda` without CUDA, `cuda:1` on a one-GPU box: one line, nothing run
        print(f"gpu_check: error: {err}", file=sys.stderr)
        recorder.write({"check": "device", "ok": False, "error": str(err)})
        recorder.summary()
        return 2
    import torch

    threads = args.threads or (1 if sizes.smoke and device == "cpu" else None)
    if threads:  # two threads on a shared 2-core machine spin-wait on each other: 10x slower steps
        torch.set_num_threads(threads)
    recorder.run("machine", lambda: machine(device))
    for name, section in sections(sizes).items():
        if args.only is None or name in args.only:
            section(recorder, device, sizes)
    return 0 if recorder.summary()["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
