"""Cross-check the lab's Linformer and Performer (tui_lab/model/efficient.py) against `linformer` 0.2.3 and
`performer-pytorch` 1.1.4, the reference implementations on the package registry (optional: not dependencies).

    pip install --no-deps linformer performer-pytorch einops "local-attention==1.9.0" axial-positional-embedding
    python benchmarks/agreement/efficient_attention_check.py

Linformer: the lab's SelfAttention (bias off, headwise E and F) given `LinformerSelfAttention`'s weights, the
same input; outputs should agree to float rounding, at the full length and at a shorter one (both use E's first
L rows). Performer: the same feature matrix in both (`FastAttention.projection_matrix` = our buffer `w`);
performer-pytorch adds eps = 1e-4 to every feature and stabilises keys by their max, we add nothing and use a
fixed bound, so agreement is close but not exact: the script prints the relative difference, beside each
one's error against exact softmax attention on the same q, k, v, then their kernel and sums with eps = 0.

Measured (CPU, float32): Linformer max |diff| 1.0e-7 (L = 64) and 8.9e-8 (L = 40); Performer 6.6e-3
(bidirectional) and 4.7e-3 (causal) with their eps, 4.9e-7 and 4.1e-7 without it.
"""

from __future__ import annotations

import torch

from tui_lab.config import ModelConfig
from tui_lab.model.attention import SelfAttention
from tui_lab.model.efficient import PerformerFeatures, performer_attend
from tui_lab.model.scaled_dot import attend


def linformer_check() -> None:
    from linformer import LinformerSelfAttention

    torch.manual_seed(0)
    n, k, e, h = 64, 16, 64, 4
    theirs = LinformerSelfAttention(e, n, k=k, heads=h).eval()
    config = ModelConfig(family="encoder-only", encoder_layers=1, decoder_layers=0, d_model=e, heads=h, max_len=n,
                         bias=False, dropout=0.0, self_attention="linformer", linformer_k=k)
    ours = SelfAttention(config, causal=False).eval()
    with torch.no_grad():
        ours.qkv.weight.copy_(torch.cat([theirs.to_q.weight, theirs.to_k.weight, theirs.to_v.weight]))
        ours.out.weight.copy_(theirs.to_out.weight)
        ours.out.bias = torch.nn.Parameter(theirs.to_out.bias.clone())  # theirs has an output bias
        ours.approx.e.copy_(theirs.proj_k[None])
        ours.approx.f.copy_(theirs.proj_v[None])
        for length in (n, 40):
            x = torch.randn(2, length, e)
            diff = (ours(x) - theirs(x)).abs().max().item()
            print(f"linformer L={length}: max |ours - linformer 0.2.3| = {diff:.2e}")


def performer_check() -> None:
    from performer_pytorch import FastAttention
    from performer_pytorch.performer_pytorch import causal_linear_attention_noncuda, linear_attention, softmax_kernel

    torch.manual_seed(0)
    d, m, length = 32, 256, 128
    q, k, v = (torch.randn(1, 4, length, d) * 0.5 for _ in range(3))
    phi = PerformerFeatures(ModelConfig(d_model=4 * d, heads=4, self_attention="performer", performer_features=m))
    for causal in (False, True):
        theirs = FastAttention(dim_heads=d, nb_features=m, causal=causal)
        theirs.projection_matrix.copy_(phi.w)
        exact = attend(q, k, v, causal=causal)[0]
        with torch.no_grad():
            ours, ref = performer_attend(phi, q, k, v, None, causal, None), theirs(q, k, v)
        rel = lambda a, b: ((a - b).norm() / b.norm()).item()  # noqa: E731
        print(f"performer causal={causal}: ||ours - performer-pytorch|| / ||theirs|| = {rel(ours, ref):.2e}; "
              f"error vs exact softmax: ours {rel(ours, exact):.4f}, theirs {rel(ref, exact):.4f}")
        # their kernel and causal sums without their eps: the same maths, only the (cancelling) stabilisers differ
        qf, kf = (softmax_kernel(x, projection_matrix=phi.w, is_query=is_q, eps=0.0) for x, is_q in ((q, True),
                                                                                                      (k, False)))
        bare = causal_linear_attention_noncuda(qf, kf, v, eps=0.0) if causal else linear_attention(qf, kf, v)
        print(f"  with their eps = 0: ||ours - theirs|| / ||theirs|| = {rel(ours, bare):.2e}")


if __name__ == "__main__":
    linformer_check()
    performer_check()
