"""What a generation or a training run will cost before it starts: a time floor and the memory it needs.

Pure arithmetic on the config (no torch), so a command line can refuse `--max-new-tokens 1000000000` or
`--steps 10**12` before anything is built. The time is a floor, never a forecast: the FLOPs (cost.py) at the
best matmul rate seen on each kind of device, or a per-layer step cost below anything measured, whichever
is larger. A run refused on its floor would certainly have taken longer.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_lab.analysis.cost import activation_bytes, flops_per_token, kv_cache_bytes, memory
from tui_lab.analysis.format import fmt_bytes
from tui_lab.config import ModelConfig

# Best fp32 matmul rates seen (REFERENCE.md: 240-300 GFLOP/s on 2 AVX-512 cores); a GPU figure above any
# fp32 card's, so the floor stays a floor there too.
BEST_FLOPS = {"cpu": 3e11, "cuda": 1e15, "mps": 3e13}
# A decode step costs at least this per decoder layer (kernel launches, Python): gpt2-toy measured ~1 ms a
# token for 4 layers on the Xeon (benchmarks/speed/generate_speed.py), 12x this.
STEP_FLOOR_S_PER_LAYER = 2e-5
GENERATION_LIMIT_S = 600.0  # longer than ten minutes: almost surely a typo; --yes runs it anyway
TRAINING_LIMIT_S = 3600.0  # an hour of compute at the best rate seen; --yes runs it anyway


@dataclass(frozen=True)
class Budget:
    seconds: float  # at least this long
    bytes: int  # generation: beyond the weights (KV cache, logits); training: weights, gradients, moments, activations

    def line(self) -> str:
        return f"at least {fmt_seconds(self.seconds)} and about {fmt_bytes(self.bytes)} of memory"


def fmt_seconds(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} s"


def _best_flops(device: str) -> float:
    return BEST_FLOPS.get(device.split(":")[0], BEST_FLOPS["cuda"])


def generation_budget(c: ModelConfig, prompt_len: int, new_tokens: int, rows: int = 1, use_cache: bool = True,
                      device: str = "cpu") -> Budget:
    """`rows` sequences (batch x beam) continued by `new_tokens` after `prompt_len` tokens."""
    window = c.max_len if c.positions == "learned" else None  # learned positions slide at max_len
    total = prompt_len + new_tokens
    context = min(prompt_len + new_tokens // 2, window or total)  # the mean context over the run
    per_token = flops_per_token(c, max(context, 1)) * (1 if use_cache else max(context, 1))
    flops = per_token * new_tokens * rows
    floor = new_tokens * max(c.decoder_layers, 1) * STEP_FLOOR_S_PER_LAYER
    held = min(total, window or total)
    cache = kv_cache_bytes(c, held, rows) if use_cache else 0
    # logits, probabilities and a sorted copy for top-k/top-p or the beams' candidates; the ids themselves.
    scores = rows * c.vocab * 4 * 4 + rows * total * 8
    recompute = 0 if use_cache else activation_bytes(c, rows, held, 4) // 2  # one forward, nothing kept for backward
    return Budget(max(flops / _best_flops(device), floor), cache + scores + recompute)


# A fast memory copy: beam search reorders every beam's KV cache at each step (generation/beam.py), a floor.
COPY_BYTES_PER_S = 10e9


def beam_search_budget(c: ModelConfig, prompt_len: int, new_tokens: int, beams: int, use_cache: bool = True,
                       device: str = "cpu") -> tuple[Budget, int]:
    """`generation_budget` of `beams` rows plus the cache each step reorders; and that cache's bytes."""
    budget = generation_budget(c, prompt_len, new_tokens, beams, use_cache, device)
    window = c.max_len if c.positions == "learned" else None
    cache = kv_cache_bytes(c, min(prompt_len + new_tokens, window or prompt_len + new_tokens), beams) \
        if use_cache else 0
    return Budget(budget.seconds + new_tokens * cache / COPY_BYTES_PER_S, budget.bytes), cache


def training_budget(c: ModelConfig, steps: int, batch_size: int, seq_len: int, device: str = "cpu",
                    eval_every: int = 0, eval_batches: int = 0) -> Budget:
    """`steps` optimizer steps of `batch_size` x `seq_len` tokens (AdamW: weights, gradients, two moments), and
    an evaluation of `eval_batches` forward batches every `eval_every` steps and at the end."""
    tokens = steps * batch_size * seq_len
    evals = (steps // eval_every if eval_every else 0) + 1
    eval_tokens = evals * eval_batches * batch_size * seq_len
    # forward + backward (cost.training_flops_per_token), and the evaluations' forwards
    flops = flops_per_token(c, seq_len) * (3 * tokens + eval_tokens)
    mem = memory(c, batch_size, seq_len)
    return Budget(flops / _best_flops(device), mem.training + mem.activations)


def budget_problem(budget: Budget, what: str, limit_s: float, free: int | None, yes: bool) -> str | None:
    """One line refusing a run: memory it cannot have (always), or time past `limit_s` (unless `yes`)."""
    if free is not None and budget.bytes > free:
        return f"{what} needs about {fmt_bytes(budget.bytes)} of memory but {fmt_bytes(free)} is free"
    if budget.seconds > limit_s and not yes:
        return (f"{what} would take {budget.line()} (the limit without --yes is {fmt_seconds(limit_s)}); "
                "lower it, or add --yes to run it anyway")
    return None
