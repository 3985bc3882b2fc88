"""Path patching against the path built by hand: the sender's clean-minus-corrupted write (z @ W_O of its head)
added to its layer's attention output, the heads in between frozen at their corrupted z, the receiver's input read
there and put into a plain corrupted run (issue 40, what to add 1)."""

from __future__ import annotations

import pytest
import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks
from tui_lab.mechanism.heads import output_slice
from tui_lab.mechanism.patching import PatchMetric
from tui_lab.mechanism.path_patching import path_patching


def _model(**shape) -> torch.nn.Module:
    torch.manual_seed(1)
    config = ModelConfig(
        family="decoder-only",
        decoder_layers=3,
        d_model=32,
        heads=4,
        d_ff=48,
        vocab=30,
        max_len=16,
        dropout=0.0,
        **shape,
    )
    model = build_model(config).double().eval()
    with torch.no_grad():  # GPT-2's 0.02 init leaves paths of 1e-5; larger weights make each path count
        for p in model.parameters():
            p.mul_(8.0 if p.dim() > 1 else 1.0)
    return model


def _by_hand(model, clean, corrupt, metric, sender, receiver, name: str) -> float:
    (s_layer, s_head), (r_layer, r_head) = sender, receiver
    z = lambda layer: f"blocks.{layer}.attn.hook_z"  # noqa: E731
    _, c_clean = run_with_cache(model, clean[None], names=[z(s_layer)])
    _, c_corrupt = run_with_cache(model, corrupt[None], names=[z(layer) for layer in range(r_layer)])
    w_o = output_slice(model.decoder[s_layer], s_head)
    delta = (c_clean[z(s_layer)][0, :, s_head] - c_corrupt[z(s_layer)][0, :, s_head]) @ w_o  # (L, E)
    hooks = [(f"blocks.{s_layer}.hook_attn_out", lambda out, _: out + delta)]
    hooks += [(z(layer), lambda v, _, layer=layer: c_corrupt[z(layer)]) for layer in range(s_layer + 1, r_layer)]
    read = f"blocks.{r_layer}.attn.hook_{name}"
    with torch.no_grad():
        from tui_lab.model.hooks import attached

        with attached(model, hooks):
            _, seen = run_with_cache(model, corrupt[None], names=[read])
        kv = r_head if name == "q" else r_head // (model.config.heads // model.config.n_kv_heads)

        def put(x, _):
            x = x.clone()
            x[:, :, kv] = seen[read][:, :, kv]
            return x

        patched = float(metric(run_with_hooks(model, corrupt[None], hooks=[(read, put)]))[0])
        m_clean, m_corrupt = (float(metric(model(x[None]))[0]) for x in (clean, corrupt))
    return (patched - m_corrupt) / (m_clean - m_corrupt)


@pytest.mark.parametrize(
    "shape", [{}, {"kv_heads": 2, "norm": "rmsnorm", "positions": "rope"}], ids=["gpt2-like", "gqa-rope"]
)
@pytest.mark.parametrize("name", ["q", "k", "v"])
def test_each_sender_to_receiver_path_equals_the_path_built_by_hand(shape, name):
    model = _model(**shape)
    clean, corrupt = torch.tensor([4, 8, 15, 16, 23, 9]), torch.tensor([4, 8, 2, 16, 23, 9])
    metric = PatchMetric("logit_diff", 3, 7)
    table = path_patching(model, clean, corrupt, metric, (2, 1), (name,))
    assert len(table.values) == 2 and table.columns == "head" and table.kind == f"path L2H1 {name}"
    for sender in [(0, 0), (0, 3), (1, 2)]:
        expected = _by_hand(model, clean, corrupt, metric, sender, (2, 1), name)
        assert abs(table.values[sender[0]][sender[1]] - expected) < 1e-9, sender
    assert max(abs(v) for row in table.values for v in row) > 1e-2


def test_all_three_inputs_at_once_and_bad_receivers():
    model = _model()
    clean, corrupt = torch.tensor([4, 8, 15, 16]), torch.tensor([4, 9, 15, 16])
    metric = PatchMetric("logit", 3)
    both = path_patching(model, clean, corrupt, metric, (1, 0), ("q", "k", "v"))
    assert len(both.values) == 1 and len(both.values[0]) == 4
    with pytest.raises(ValueError, match=r"^receiver: L0H1 must be a head in layers 1..2"):
        path_patching(model, clean, corrupt, metric, (0, 1))
    with pytest.raises(ValueError, match="^receiver input must be some of q, k, v, not x"):
        path_patching(model, clean, corrupt, metric, (1, 1), ("x",))
