"""Training agrees with transformers: the first steps of the lab's Trainer on gpt2-toy and of GPT2LMHeadModel,
from the same weights on the same batches with the same AdamW, schedule and clipping (dropout 0), give the same
losses. benchmarks/agreement/train_curves_vs_hf.py runs the same pairing to 200 steps and prints both curves."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")
BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "agreement" / "train_curves_vs_hf.py"


def test_the_first_steps_give_transformers_losses():
    spec = importlib.util.spec_from_file_location("train_curves_vs_hf", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny batches: one thread is fastest, and spin-waits on a shared machine are not
    try:
        curves = module.paired_curves("gpt2-toy", steps=5, log_every=1, batch_size=4, seq_len=32, warmup=2)
    finally:
        torch.set_num_threads(threads)
    assert curves.steps == [1, 2, 3, 4, 5]
    assert curves.ours[-1] < curves.ours[0] - 0.3  # it trains (lr 3e-3 after a 2-step warm-up)
    assert curves.worst_gap < 1e-4, list(zip(curves.ours, curves.theirs, strict=True))
