"""Tiny random-weight transformers models and the same weights loaded as ours, in float64 (no test downloads).

Float64 on both sides leaves only the tools' own mistakes above the tests' tolerances."""

from __future__ import annotations

from pathlib import Path

import torch
from hf_family_fixtures import save_causal
from hf_fixtures import save_hf_gpt2

from tui_lab.hf import load_hf

GPT2_SHAPE = dict(n_embd=32, n_head=4, n_layer=3, n_positions=48)


def gpt2_pair(folder: Path):
    """(ours, transformers' GPT2LMHeadModel), same weights, float64; the folder has a tokenizer too."""
    theirs = save_hf_gpt2(folder, **GPT2_SHAPE)
    ours, _ = load_hf(folder)
    return ours.double().eval(), theirs.double().eval()


def llama_pair(folder: Path, kind: str = "llama-gqa"):
    """(ours, transformers' LlamaForCausalLM) with grouped-query heads, float64."""
    theirs = save_causal(kind, folder)
    ours, _ = load_hf(folder)
    return ours.double().eval(), theirs.double().eval()


def random_ids(vocab: int, shape: tuple[int, ...], seed: int = 1) -> torch.Tensor:
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))
