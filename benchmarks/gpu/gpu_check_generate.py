"""gpu_check's hf and cache sections: the lab against transformers' GPT-2 on the device, and the KV cache.

Both comparisons with transformers run on the same weights: a random GPT2LMHeadModel is saved to a
temporary folder and opened by the lab's own loader (`load_model("hf", ...)`), so the training losses and
the greedy ids can be compared exactly, and the speeds like for like (timed alternately, CUDA synchronised).
"""

from __future__ import annotations

import tempfile
from typing import Any

import torch
from generate_vs_hf import greedy_runs, hf_twin, paired_medians
from gpu_check_models import TIE, top2_gap_where_they_part
from train_vs_hf import alternate, hf_loss, hf_model, ours_loss, random_batches, step_timer

from tui_lab import load_preset
from tui_lab.bench.kv_speed import compare_generation
from tui_lab.loading import load_model

LOSS_ATOL = 1e-3  # the same weights and batches: the same loss at every step, up to float noise
SLOWEST_RATIO = 0.5  # ours / transformers tokens/s below this means a path fell off the device's fast kernels
PROMPT = 16


def run_hf(recorder, device: str, sizes) -> None:
    recorder.run("hf train step", lambda: train_step(device, sizes))
    recorder.run("hf generate", lambda: greedy(device, sizes))


def run_cache(recorder, device: str, sizes) -> None:
    short, long = sizes.cache_lengths
    recorder.run(f"cache {short}", lambda: cached_vs_uncached(device, short, sizes.repeats))
    recorder.run(f"cache {long}", lambda: cached_vs_uncached(device, long, sizes.repeats, max_len=PROMPT + long))


def ours_from(hf, device: str):
    """The lab's model with `hf`'s weights, through the lab's loader (as `--from-hf FOLDER` opens them)."""
    from transformers.utils import logging

    logging.disable_progress_bar()  # stderr stays for errors: the lines are the report
    with tempfile.TemporaryDirectory() as folder:
        hf.save_pretrained(folder)
        return load_model("hf", folder, device=device).model


def train_step(device: str, sizes) -> dict[str, Any]:
    config = load_preset("gpt2-toy", dropout=0.0, **sizes.shrink)
    torch.manual_seed(0)
    theirs = hf_model(config)
    ours = ours_from(theirs, device)
    theirs.to(device)
    batches = random_batches(config, sizes.lm_batch, sizes.seq_len, device)
    losses: dict[str, list[float]] = {"ours": [], "hf": []}
    steps = {"ours": step_timer(ours, ours_loss, batches, losses["ours"]),
             "hf": step_timer(theirs, hf_loss, batches, losses["hf"])}
    warmup, timed = 2, 10 if sizes.smoke else 30
    times = alternate(steps, warmup + timed, warmup)
    tokens = sizes.lm_batch * sizes.seq_len
    ours_tps, hf_tps = (tokens * len(times[k]) / sum(times[k]) for k in ("ours", "hf"))
    gap = max(abs(a - b) for a, b in zip(losses["ours"], losses["hf"], strict=True))
    return {"ok": gap <= LOSS_ATOL and ours_tps >= SLOWEST_RATIO * hf_tps, "steps": len(losses["ours"]),
            "max_loss_gap": gap, "ours_tokens_per_s": ours_tps, "hf_tokens_per_s": hf_tps,
            "ratio": ours_tps / hf_tps, "batch": sizes.lm_batch, "seq_len": sizes.seq_len}


def greedy(device: str, sizes) -> dict[str, Any]:
    """Our cached greedy decoding vs GPT2LMHeadModel.generate (KV cache on both), same weights and prompt."""
    torch.manual_seed(0)
    theirs = hf_twin("gpt2-toy")
    ours = ours_from(theirs, device).eval()
    theirs.to(device)
    n = sizes.hf_gen_tokens
    prompt = torch.randint(ours.config.vocab, (1, PROMPT), generator=torch.Generator().manual_seed(3)).to(device)
    run_ours, run_theirs = greedy_runs(ours, theirs, prompt, n)
    ids, expected = run_ours(), run_theirs()
    same = bool(torch.equal(ids, expected))
    first = None if same else int((ids != expected).nonzero()[0, 1]) - PROMPT
    gap = None if same else top2_gap_where_they_part(ours, ids, expected)
    ours_s, theirs_s = paired_medians(run_ours, run_theirs, sizes.repeats, torch.device(device))
    return {"ok": (same or gap <= TIE) and theirs_s / ours_s >= SLOWEST_RATIO, "identical": same,
            "first_difference": first, "top2_gap_where_they_part": gap,
            "new_tokens": n, "ours_tokens_per_s": n / ours_s, "hf_tokens_per_s": n / theirs_s,
            "ratio": theirs_s / ours_s}


def cached_vs_uncached(device: str, new_tokens: int, repeats: int, max_len: int | None = None) -> dict[str, Any]:
    """gpt2-toy (or gpt2-toy with a longer window) decoding `new_tokens` greedily with and without the cache."""
    config = load_preset("gpt2-toy", **({"max_len": max_len} if max_len else {}))
    model = load_model("config", config, device=device).model
    run = compare_generation(model, prompt_len=PROMPT, new_tokens=(new_tokens,), repeats=repeats).runs[0]
    return {"ok": run.identical and not run.slid, "identical": run.identical, "slid": run.slid,
            "max_len": config.max_len, "new_tokens": new_tokens, "cached_s": run.cached_s,
            "uncached_s": run.uncached_s, "speedup": run.speedup, "cached_tokens_per_s": new_tokens / run.cached_s,
            "uncached_tokens_per_s": new_tokens / run.uncached_s}
