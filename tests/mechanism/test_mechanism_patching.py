"""Activation patching on a hand-built model whose answer is known: block 0's one head copies the token at
position 1 to the last position, block 1 does nothing. Restoring the clean stream before block 0 helps only
at position 1; before block 1 only at the last position (the answer has moved there)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks
from tui_lab.mechanism.patching import logit_difference, patch_residual

V, T, E = 4, 3, 16  # tokens in dims 0..3, positions in dims 4..7, the moved token in dims 8..11


def copier() -> torch.nn.Module:
    """Every input vector is two one-hot dims (its token and its position), so the first LayerNorm is the same
    affine map a*x + b at every position; q and k read position dims, so the last query picks position 1."""
    config = ModelConfig(family="decoder-only", decoder_layers=2, d_model=E, heads=1, d_ff=4, vocab=V, max_len=4,
                         dropout=0.0, bias=False, tie_embeddings=False, positions="learned", activation="gelu")
    model = build_model(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.zero_()
        model.tok_embed.weight[torch.arange(V), torch.arange(V)] = 1.0
        model.pos_embed.weight[torch.arange(4), 4 + torch.arange(4)] = 1.0
        attn, s = model.decoder[0].attn, 5.0
        attn.qkv.weight[0, 4 + T - 1] = s  # q: "I am the last position"
        attn.qkv.weight[E, 4 + 1] = s  # k: "I am position 1"
        attn.qkv.weight[2 * E + torch.arange(V), torch.arange(V)] = 1.0  # v: the token
        attn.out.weight[8 + torch.arange(V), torch.arange(V)] = 1.0  # o: written to the moved dims
        model.lm_head.weight[torch.arange(V), 8 + torch.arange(V)] = 1.0  # the logits read the moved dims
    return model


def test_the_hand_built_copier_gives_the_known_table():
    model = copier()
    clean, corrupt = torch.tensor([1, 0, 2]), torch.tensor([3, 1, 2])  # position 1 carries the answer (0 vs 1)
    table = patch_residual(model, clean, corrupt, answer=0, wrong=1)
    assert table.ld_clean > 0 > table.ld_corrupt
    assert table.points == ["blocks.0.hook_resid_pre", "blocks.1.hook_resid_pre"]
    torch.testing.assert_close(torch.tensor(table.values), torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
                               rtol=0, atol=1e-5)


def test_one_pass_per_layer_equals_patching_one_position_at_a_time():
    torch.manual_seed(0)
    model = build_model(ModelConfig(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48,
                                    vocab=30, max_len=16, dropout=0.0)).eval()
    clean, corrupt = torch.randint(0, 30, (6,)), torch.randint(0, 30, (6,))
    table = patch_residual(model, clean, corrupt, answer=3, wrong=7)
    with torch.no_grad():
        ld_clean, ld_corrupt = (float(logit_difference(model(x[None]), 3, 7)[0]) for x in (clean, corrupt))
        for layer in range(2):
            point = f"blocks.{layer}.hook_resid_pre"
            _, cache = run_with_cache(model, clean[None], names=[point])
            for t in range(6):
                def restore(v, _, t=t, saved=cache[point]):
                    v = v.clone()
                    v[:, t] = saved[:, t]
                    return v

                patched = run_with_hooks(model, corrupt[None], hooks=[(point, restore)])
                expected = (float(logit_difference(patched, 3, 7)[0]) - ld_corrupt) / (ld_clean - ld_corrupt)
                assert abs(table.values[layer][t] - expected) < 1e-4, (layer, t)


def test_prompts_of_two_lengths_and_nothing_to_restore_are_refused_in_one_line():
    model = copier()
    with pytest.raises(ValueError, match=r"as long as each other \(3 and 2 tokens\)"):
        patch_residual(model, torch.tensor([1, 0, 2]), torch.tensor([1, 0]), 0, 1)
    with pytest.raises(ValueError, match="same logit difference"):
        patch_residual(model, torch.tensor([1, 0, 2]), torch.tensor([3, 0, 2]), 0, 1)
