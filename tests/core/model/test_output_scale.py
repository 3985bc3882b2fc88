"""output_scale 'inv_sqrt_d_model' (the original T5, issue 27): the last decoder state times d_model^-0.5 before the
output layer, in the model's logits and in what reads the output layer directly (the logit lens, attribution)."""

import torch

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.cache import run_with_cache
from tui_lab.mechanism.lens import unembed


def test_the_logits_and_the_lens_scale_the_state():
    config = ModelConfig(decoder_layers=2, d_model=16, heads=2, d_ff=24, vocab=30, max_len=16, dropout=0.0,
                         positions="t5", relative_buckets=8, relative_max_distance=20, norm="rmsnorm", bias=False)
    torch.manual_seed(0)
    plain = build_model(config).eval()
    scaled = build_model(config.replace(output_scale="inv_sqrt_d_model")).eval()
    scaled.load_state_dict(plain.state_dict())
    ids = torch.randint(0, 30, (1, 9))
    with torch.no_grad():
        assert torch.allclose(scaled(ids), plain(ids) / 4.0, atol=1e-6)  # 16^-0.5
        logits, cache = run_with_cache(scaled, ids, names=["blocks.1.hook_resid_post"])
        assert torch.allclose(unembed(scaled, cache["blocks.1.hook_resid_post"]), logits, atol=1e-6)
