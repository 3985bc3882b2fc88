"""How many CPU threads decoding runs on: chosen per path (cached, uncached) by measuring, restored after.

Decoding at batch 1 is many tiny ops; OpenMP threads then cost more in hand-offs than they give. On the
shared 2-core machine (load 7-12 from other processes), gpt2-toy's cached step took ~1.2 ms on 1 thread
and 1-80 ms on torch's default 2 (threads spinning at each barrier while the other was descheduled). The
best count depends on the machine, its device, the model's width and the batch, and differs between
the paths (an uncached step over a long sequence has bigger matmuls), so it is measured for each path,
never assumed: the candidates 1, 2, 4, ... up to torch's current count (the ceiling a person set with
OMP_NUM_THREADS or torch.set_num_threads stays the ceiling) each decode a few tokens, alternating, and
the fastest wins (a tie goes to fewer threads: they leave the rest of the machine alone).

The measurement runs lazily, at the first generation that needs it (never before the app's first frame,
never inside a timed region), and is kept in the user's cache folder (`tui_lab.paths.cache_dir()`, file
`THREADS_FILE`) under `decode_key`; later launches read it back (delete the file to measure again).
`TUI_LAB_DECODE_THREADS=N` forces N (for measuring). Devices other than the CPU keep torch's setting.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from tui_lab.model import Transformer
from tui_lab.paths import keep, read_kept

THREADS_FILE = "decode_threads.json"
ROUNDS = 3  # alternating rounds per candidate; the median is kept
CACHED_TOKENS = 16  # tokens a cached trial decodes (after a 16-token prompt)
UNCACHED_STEPS = 4  # steps an uncached trial decodes at a long context (where its matmuls are biggest)
UNCACHED_CONTEXT = 128

_CHOSEN: dict[str, int] = {}  # this process's choices, by decode_key


@contextmanager
def torch_threads(count: int | None) -> Iterator[int]:
    """Run the block on `count` torch threads (None: unchanged); the previous count comes back after."""
    previous = torch.get_num_threads()
    if count is not None and count != previous:
        torch.set_num_threads(count)
    try:
        yield torch.get_num_threads()
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)


def decode_threads(model: Transformer, use_cache: bool, rows: int = 1) -> int | None:
    """The thread count for decoding `rows` rows of `model` on `use_cache`'s path; None keeps torch's."""
    if next(model.parameters()).device.type != "cpu":
        return None  # GPU kernels do not use the OpenMP pool for their work
    forced = os.environ.get("TUI_LAB_DECODE_THREADS", "")
    if forced.isdigit() and int(forced) > 0:
        return int(forced)
    choices = candidates(torch.get_num_threads())
    if len(choices) == 1:
        return choices[0]
    key = decode_key(model, use_cache, rows)
    if key not in _CHOSEN:
        kept = _read(key)
        _CHOSEN[key] = kept if kept in choices else _write(key, *_measure(model, use_cache, rows, choices))
    return _CHOSEN[key]


def candidates(ceiling: int) -> list[int]:
    """1, 2, 4, ... below `ceiling`, and `ceiling` itself."""
    counts, n = [], 1
    while n < ceiling:
        counts.append(n)
        n *= 2
    return counts + [max(1, ceiling)]


def decode_key(model: Transformer, use_cache: bool, rows: int) -> str:
    """What a kept choice is valid for: the CPU's model, torch, the ceiling, OpenMP's wait settings (the app
    shortens the spin), the model's shape bucket (family, width and depth to the next power of two), the
    batch bucket and the path."""
    from tui_lab.hardware import device_name

    c = model.config
    omp = f"{os.environ.get('OMP_WAIT_POLICY', '-')}/{os.environ.get('GOMP_SPINCOUNT', '-')}"
    layers = c.encoder_layers + c.decoder_layers
    return (f"{device_name('cpu')}|torch={torch.__version__}|ceiling={torch.get_num_threads()}|omp={omp}|"
            f"{c.family}|d_model<={_bucket(c.d_model)}|layers<={_bucket(layers)}|rows<={_bucket(rows)}|"
            f"{'cached' if use_cache else 'uncached'}")


def _bucket(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _measure(model: Transformer, use_cache: bool, rows: int, choices: list[int]) -> tuple[int, dict[int, float]]:
    """Time a short decode on each candidate, alternating; a candidate twice as slow as the best drops out."""
    trial = _trial(model, use_cache, rows)
    trial(None)  # warm-up on the current count: first-call allocation and kernel selection are not measured
    times: dict[int, list[float]] = {n: [] for n in choices}
    running = list(choices)
    for _ in range(ROUNDS):
        for n in running:
            # A trial 3x slower than the best so far has lost: cut it short (2 spinning threads on a
            # loaded 2-core machine took 8 s for what 1 thread did in 0.07 s).
            limit = 3 * min((min(t) for t in times.values() if t), default=float("inf"))
            with torch_threads(n):
                times[n].append(trial(limit))
        best = min(min(times[n]) for n in running)
        running = [n for n in running if min(times[n]) <= 2 * best]
    medians = {n: statistics.median(t) for n, t in times.items()}  # dropped candidates too, for the record
    fastest = min(medians[n] for n in running)
    return min(n for n in running if medians[n] <= 1.05 * fastest), medians


def _trial(model: Transformer, use_cache: bool, rows: int) -> Callable[[float | None], float]:
    """A closure decoding a few greedy tokens the way the chosen path will (random ids, the global RNG untouched)."""
    from tui_lab.generation.lengths import position_window
    from tui_lab.generation.loop import Generation, Sampler, eval_mode

    c = model.config
    steps = CACHED_TOKENS if use_cache else UNCACHED_STEPS
    context = 16 if use_cache else min(UNCACHED_CONTEXT, position_window(c) or UNCACHED_CONTEXT)
    prompt_len = max(1, context - steps) if c.family == "decoder-only" else context
    device = next(model.parameters()).device
    prompt = torch.randint(c.vocab, (rows, prompt_len), generator=torch.Generator().manual_seed(0)).to(device)
    # An encoder-decoder's target grows from bos: uncached, its steps run at the target's length.
    new = steps if c.family == "decoder-only" or use_cache else min(context, 32)

    def run(limit_s: float | None) -> float:
        """Seconds taken; stops once past `limit_s` (the time so far then stands for a loss)."""
        start = time.perf_counter()
        with eval_mode(model), torch.inference_mode():
            for _ in Generation(model, prompt, new, Sampler(temperature=0.0), use_cache, bos_id=0).steps(False):
                if limit_s is not None and time.perf_counter() - start > limit_s:
                    break
        return time.perf_counter() - start

    return run


def _read(key: str) -> int | None:
    entry = read_kept(THREADS_FILE).get(key)
    threads = entry.get("threads") if isinstance(entry, dict) else None
    return threads if isinstance(threads, int) and threads > 0 else None


def _write(key: str, threads: int, seconds: dict[int, float]) -> int:
    """Keep `threads` under `key` with what it was chosen from."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    keep(THREADS_FILE, key, {"threads": threads, "trial_s": {str(n): s for n, s in seconds.items()}, "load": load})
    return threads
